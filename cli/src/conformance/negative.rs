//! Checks for `negative` cases: the outcome class this library must give,
//! and the caller's buffer unchanged on every error.

use kemsphinx::{
    Action, Error, PrivateKey, PublicKey, Surb, SurbKeys, encrypted_reply_mut, packet_mut,
    payload_ref, unwrap,
};
use serde_json::Value;

use super::json::{Outcome, bytes, string};

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
        _ => "ok_other",
    }
}

/// Run one negative case and compare its class with `expect`.
pub(crate) fn negative(case: &Value) -> Outcome {
    let expect = string(case, "expect")?;
    let (got, unchanged) = match string(case, "op")? {
        "unwrap" => unwrap_case(case)?,
        "reply_from_surb" => reply_case(case)?,
        "decrypt_reply" => decrypt_case(case)?,
        "load_private_key" => (
            class(PrivateKey::try_from(&bytes(case, "private_key")?[..]).map(|_| "ok")),
            true,
        ),
        "load_public_key" => (
            class(PublicKey::try_from(&bytes(case, "public_key")?[..]).map(|_| "ok")),
            true,
        ),
        other => return Err(format!("unknown negative op `{other}`")),
    };
    if got != expect {
        return Err(format!("expected {expect}, got {got}"));
    }
    if got.starts_with("err_") && !unchanged {
        return Err(format!("{got}, but the input buffer was modified"));
    }
    Ok(())
}

/// The class of a result whose success is already named.
fn class(result: Result<&'static str, Error>) -> &'static str {
    result.unwrap_or_else(|e| error_class(&e))
}

/// `unwrap`: load the key, take the packet through the slice boundary,
/// unwrap, and check the buffer on error.
fn unwrap_case(case: &Value) -> Result<(&'static str, bool), String> {
    let key = match PrivateKey::try_from(&bytes(case, "private_key")?[..]) {
        Ok(key) => key,
        Err(e) => return Ok((error_class(&e), true)),
    };
    let original = bytes(case, "packet")?;
    let mut buf = original.clone();
    let got = match packet_mut(&mut buf) {
        Err(e) => error_class(&e),
        Ok(packet) => match unwrap(&key, packet) {
            Ok(out) => action_class(&out.action),
            Err(e) => error_class(&e),
        },
    };
    Ok((got, buf == original))
}

/// `reply_from_surb`: both inputs through the slice boundary.
fn reply_case(case: &Value) -> Result<(&'static str, bool), String> {
    let surb = bytes(case, "surb")?;
    let payload = bytes(case, "payload")?;
    let got = Surb::try_from(&surb[..]).and_then(|surb| {
        let payload = payload_ref(&payload)?;
        let mut out = Box::new([0u8; kemsphinx::geometry::PACKET_LEN]);
        surb.reply(payload, &mut out);
        Ok("ok")
    });
    Ok((class(got), true))
}

/// `decrypt_reply`: keys and reply through the slice boundary, in place.
fn decrypt_case(case: &Value) -> Result<(&'static str, bool), String> {
    let original = bytes(case, "encrypted_reply")?;
    let mut buf = original.clone();
    let got = SurbKeys::try_from(&bytes(case, "surb_keys")?[..]).and_then(|keys| {
        let reply = encrypted_reply_mut(&mut buf)?;
        keys.decrypt_reply(reply).map(|_| "ok")
    });
    Ok((class(got), buf == original))
}
