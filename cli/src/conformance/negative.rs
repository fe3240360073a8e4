//! Checks for `negative` cases: the outcome class this library must give,
//! its exact error when the case names one (`expect_detail`), and the
//! caller's buffer unchanged on every error.

use chacha20::ChaCha20Rng;
use kemsphinx::geometry::PACKET_LEN;
use kemsphinx::{
    Action, Error, PrivateKey, PublicKey, Surb, SurbKeys, create_packet, create_surb,
    encrypted_reply_mut, packet_mut, payload_ref, unwrap,
};
use rand_core::SeedableRng;
use serde_json::Value;

use super::packets::{creator_commands, path_from_public};
use crate::json::{Outcome, bytes, string};

/// The vector vocabulary's name for an error.
pub fn error_class(e: &Error) -> &'static str {
    match e {
        Error::Length { .. } => "err_length",
        Error::Version => "err_version",
        Error::Kem => "err_kem",
        Error::Mac => "err_mac",
        Error::Command(_) => "err_command",
        Error::PayloadTag => "err_payload_tag",
        Error::Key(_) => "err_key",
        _ => "err_other",
    }
}

/// The vector vocabulary's name for an unwrap result.
pub fn action_class(action: &Action<'_>) -> &'static str {
    match action {
        Action::Forward { .. } => "ok_forward",
        Action::Deliver { .. } => "ok_deliver",
        Action::SurbReply { .. } => "ok_reply",
    }
}

/// What an operation did, and whether the caller's buffer was left as it
/// was (`true` where there is no buffer).
type Seen = (Result<&'static str, Error>, bool);

/// Run one negative case and compare its class with `expect` (and the
/// error with `expect_detail`, this library's `Debug` form, when given).
pub(crate) fn negative(case: &Value) -> Outcome {
    let expect = string(case, "expect")?;
    let (result, unchanged) = match string(case, "op")? {
        "unwrap" => unwrap_case(case)?,
        "reply_from_surb" => reply_case(case)?,
        "decrypt_reply" => decrypt_case(case)?,
        "load_private_key" => (
            PrivateKey::try_from(&bytes(case, "private_key")?[..]).map(|_| "ok"),
            true,
        ),
        "load_public_key" => (
            PublicKey::try_from(&bytes(case, "public_key")?[..]).map(|_| "ok"),
            true,
        ),
        "create_packet" => create_packet_case(case)?,
        "create_surb" => create_surb_case(case)?,
        other => return Err(format!("unknown negative op `{other}`")),
    };
    let class = result.unwrap_or_else(|e| error_class(&e));
    if class != expect {
        let why = result
            .err()
            .map(|e| format!(" ({e:?})"))
            .unwrap_or_default();
        return Err(format!("expected {expect}, got {class}{why}"));
    }
    if let (Some(detail), Err(e)) = (case.get("expect_detail").and_then(Value::as_str), result) {
        let got = format!("{e:?}");
        if got != detail {
            return Err(format!("expected error {detail}, got {got}"));
        }
    }
    if result.is_err() && !unchanged {
        return Err(format!("{class}, but the input buffer was modified"));
    }
    Ok(())
}

/// `unwrap`: load the key, take the packet through the slice boundary,
/// unwrap, and check the buffer on error.
fn unwrap_case(case: &Value) -> Result<Seen, String> {
    let key = match PrivateKey::try_from(&bytes(case, "private_key")?[..]) {
        Ok(key) => key,
        Err(e) => return Ok((Err(e), true)),
    };
    let original = bytes(case, "packet")?;
    let mut buf = original.clone();
    let result = packet_mut(&mut buf)
        .and_then(|packet| unwrap(&key, packet).map(|out| action_class(&out.action)));
    Ok((result, buf == original))
}

/// `reply_from_surb`: both inputs through the slice boundary.
fn reply_case(case: &Value) -> Result<Seen, String> {
    let surb = bytes(case, "surb")?;
    let payload = bytes(case, "payload")?;
    let result = Surb::try_from(&surb[..]).and_then(|surb| {
        let payload = payload_ref(&payload)?;
        let mut out = Box::new([0u8; PACKET_LEN]);
        surb.reply(payload, &mut out);
        Ok("ok")
    });
    Ok((result, true))
}

/// `decrypt_reply`: keys and reply through the slice boundary, in place.
fn decrypt_case(case: &Value) -> Result<Seen, String> {
    let original = bytes(case, "encrypted_reply")?;
    let mut buf = original.clone();
    let result = SurbKeys::try_from(&bytes(case, "surb_keys")?[..]).and_then(|keys| {
        let reply = encrypted_reply_mut(&mut buf)?;
        keys.decrypt_reply(reply).map(|_| "ok")
    });
    Ok((result, buf == original))
}

/// The RNG creation cases use: fixed, so a run is reproducible. Creation
/// errors are found before any randomness is drawn.
fn rng() -> ChaCha20Rng {
    ChaCha20Rng::from_seed([0; 32])
}

/// `create_packet`: `nodes` (`id`, `public_key`), `commands`, `payload`;
/// the output buffer must be untouched on error.
fn create_packet_case(case: &Value) -> Result<Seen, String> {
    let commands = creator_commands(case)?;
    let keys = public_keys(case)?;
    let path = path_from_public(case, &keys, &commands)?;
    let payload = bytes(case, "payload")?;
    let sentinel = Box::new([0xa5u8; PACKET_LEN]);
    let mut out = sentinel.clone();
    let result = payload_ref(&payload)
        .and_then(|payload| create_packet(&mut rng(), &path, payload, &mut out))
        .map(|()| "ok");
    Ok((result, out == sentinel))
}

/// `create_surb`: `nodes` and `commands`.
fn create_surb_case(case: &Value) -> Result<Seen, String> {
    let commands = creator_commands(case)?;
    let keys = public_keys(case)?;
    let path = path_from_public(case, &keys, &commands)?;
    Ok((create_surb(&mut rng(), &path).map(|_| "ok"), true))
}

/// The public keys of `nodes`, loaded (a refused key is a malformed case).
fn public_keys(case: &Value) -> Result<Vec<PublicKey>, String> {
    crate::json::list(case, "nodes")?
        .iter()
        .map(|n| {
            PublicKey::try_from(&bytes(n, "public_key")?[..])
                .map_err(|e| format!("node public key refused: {e}"))
        })
        .collect()
}
