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

use super::packets::{creator_commands, path, public_hops};
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
        // The key first: a refused key is the outcome, whatever the packet.
        "unwrap" => match PrivateKey::try_from(&bytes(case, "private_key")?[..]) {
            Ok(key) => in_place(bytes(case, "packet")?, |buf| {
                unwrap(&key, packet_mut(buf)?).map(|out| action_class(&out.action))
            }),
            Err(e) => (Err(e), true),
        },
        "reply_from_surb" => {
            let (surb, payload) = (bytes(case, "surb")?, bytes(case, "payload")?);
            let reply = |surb: Surb| {
                surb.reply(payload_ref(&payload)?, &mut Box::new([0u8; PACKET_LEN]));
                Ok("ok")
            };
            (Surb::try_from(&surb[..]).and_then(reply), true)
        }
        "decrypt_reply" => {
            let reply = bytes(case, "encrypted_reply")?;
            let keys = SurbKeys::try_from(&bytes(case, "surb_keys")?[..]);
            in_place(reply, |buf| {
                keys?.decrypt_reply(encrypted_reply_mut(buf)?).map(|_| "ok")
            })
        }
        "load_private_key" => (
            PrivateKey::try_from(&bytes(case, "private_key")?[..]).map(|_| "ok"),
            true,
        ),
        "load_public_key" => (
            PublicKey::try_from(&bytes(case, "public_key")?[..]).map(|_| "ok"),
            true,
        ),
        op @ ("create_packet" | "create_surb") => create_case(case, op == "create_surb")?,
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

/// Run `op` on a copy of `original`, the buffer the operation works in,
/// and see whether it left the buffer as it was.
fn in_place(original: Vec<u8>, op: impl FnOnce(&mut [u8]) -> Result<&'static str, Error>) -> Seen {
    let mut buf = original.clone();
    let result = op(&mut buf);
    (result, buf == original)
}

/// `create_packet` (`nodes` with `id` and `public_key`, `commands`,
/// `payload`; the output buffer must be untouched on error) or, with
/// `surb`, `create_surb` (`nodes`, `commands`). The RNG is fixed, so a run
/// is reproducible: creation errors are found before any randomness is
/// drawn.
fn create_case(case: &Value, surb: bool) -> Result<Seen, String> {
    let commands = creator_commands(case)?;
    let hops = public_hops(case)?;
    let path = path(hops.iter().map(|(id, key)| (*id, key)), &commands)?;
    let mut rng = ChaCha20Rng::from_seed([0; 32]);
    if surb {
        return Ok((create_surb(&mut rng, &path).map(|_| "ok"), true));
    }
    let payload = bytes(case, "payload")?;
    let sentinel = Box::new([0xa5u8; PACKET_LEN]);
    let mut out = sentinel.clone();
    let result = payload_ref(&payload)
        .and_then(|payload| create_packet(&mut rng, &path, payload, &mut out))
        .map(|()| "ok");
    Ok((result, out == sentinel))
}
