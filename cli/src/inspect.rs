//! `kemsphinx inspect`: the layout of a packet or SURB, and with a key
//! what the hop holding that key does with it.
//!
//! Without a key everything shown is public: version, the KEM ciphertext's
//! two halves, the replay tag a mix would record, the MAC, sizes. With a
//! key the input is unwrapped (a copy; the file is not changed) and the
//! result printed: the commands, the action, the next hop and the outgoing
//! packet's replay tag, or the error class and why.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::ops::Range;
use std::path::Path;
use std::process::ExitCode;

use kemsphinx::geometry::layout;
use kemsphinx::geometry::{
    ENCRYPTED_PAYLOAD_LEN, PACKET_LEN, PAYLOAD_LEN, ROUTING_INFO_LEN, SURB_LEN,
};
use kemsphinx::{Action, Command, PrivateKey, Surb, replay_tag, unwrap};

use crate::conformance::{action_class, error_class};
use crate::keyfile::{Encoding, hex_or_binary, read_input, read_private_key};

/// Usage of `kemsphinx inspect`.
pub const USAGE: &str = "kemsphinx inspect FILE [--key KEYFILE] [--out FILE]\n\
  show a packet's or SURB's layout (FILE: binary or hex, `-` for stdin);\n\
  with --key (a PEM private key as `keygen` and the reference write it, or the\n\
  raw 1,280-byte encoding as binary or hex) unwrap it as that hop;\n\
  --out writes what the hop outputs (next packet, payload or encrypted reply)";

/// What `inspect` found: the text to print, and the hop's output bytes
/// when a key was given and the unwrap succeeded.
pub struct Inspection {
    /// The human-readable report.
    pub text: String,
    /// The outgoing packet, delivered payload or encrypted reply: `None`
    /// without a key, or when the unwrap failed.
    pub output: Option<Vec<u8>>,
}

/// Inspect `input` (already decoded), unwrapping it with `key` if given.
///
/// # Errors
/// When `input` is neither a packet nor a SURB by length.
pub fn inspect(input: &[u8], key: Option<&PrivateKey>) -> Result<Inspection, String> {
    let surb = input.len() == SURB_LEN;
    let packet = match input.len() {
        PACKET_LEN => kemsphinx::packet_mut(&mut input.to_vec()).map(|p| Box::new(*p)),
        SURB_LEN => Surb::try_from(input).map(|surb| {
            let mut reply = Box::new([0u8; PACKET_LEN]);
            surb.reply(&[0u8; PAYLOAD_LEN], &mut reply);
            reply
        }),
        n => {
            return Err(format!(
                "{n} bytes: neither a packet ({PACKET_LEN}) nor a SURB ({SURB_LEN})"
            ));
        }
    };
    let what = if surb { "SURB" } else { "packet" };
    let mut text = format!("{what}, {} bytes\n", input.len());
    for (range, field, value) in layout_rows(input) {
        let at = format!("[{},{})", range.start, range.end);
        let _ = writeln!(text, "  {at:<14} {field:<18} {value}");
    }
    replay_tag_line(&mut text, input);
    let output = match (key, packet) {
        (None, _) => None,
        (Some(_), Err(e)) => {
            let _ = writeln!(text, "  result         {}: {e}", error_class(&e));
            None
        }
        (Some(key), Ok(packet)) => {
            if surb {
                text.push_str(
                    "unwrapping the reply built from this SURB with an all-zero payload:\n",
                );
            }
            unwrap_report(&mut text, key, packet)
        }
    };
    Ok(Inspection { text, output })
}

/// The layout of a packet or SURB (of its full length): byte range,
/// field, value.
fn layout_rows(input: &[u8]) -> Vec<(Range<usize>, &'static str, String)> {
    use layout::{packet as p, surb as s};
    let hex_of = |range: Range<usize>| hex::encode(input.get(range).unwrap_or_default());
    let version = hex_of(p::VERSION);
    let verdict = match &*version {
        "0000" => "(ok)",
        _ => "(unknown: refused with err_version)",
    };
    let mlkem_head = hex_of(p::KEM_MLKEM.start..p::KEM_MLKEM.start + 16);
    let mlkem = format!("{mlkem_head}… ({} bytes)", p::KEM_MLKEM.len());
    let mut rows = vec![
        (p::VERSION, "version", format!("{version} {verdict}")),
        (p::KEM_X25519, "X25519 ephemeral", hex_of(p::KEM_X25519)),
        (p::KEM_MLKEM, "ML-KEM ciphertext", mlkem),
        (
            p::ROUTING_INFO,
            "routing info",
            format!("{ROUTING_INFO_LEN} bytes, encrypted"),
        ),
        (p::MAC, "MAC", hex_of(p::MAC)),
    ];
    if input.len() == SURB_LEN {
        let key = "64 bytes (the reply's payload key and IV; not shown)".to_owned();
        rows.push((s::FIRST_HOP, "first hop", hex_of(s::FIRST_HOP)));
        rows.push((s::REPLY_KEY_BLOCK, "reply key", key));
    } else {
        let payload = format!("{ENCRYPTED_PAYLOAD_LEN} bytes, enciphered");
        rows.push((p::PAYLOAD, "payload", payload));
    }
    rows
}

/// The replay tag a mix records for this header: SHA-512/256 of its KEM
/// ciphertext.
fn replay_tag_line(text: &mut String, input: &[u8]) {
    if let Some(Ok(ct)) = input
        .get(layout::packet::KEM_CIPHERTEXT)
        .map(<&kemsphinx::hazmat::KemCiphertext>::try_from)
    {
        let tag = hex::encode(kemsphinx::hazmat::replay_tag_of(ct).0);
        let at = layout::packet::KEM_CIPHERTEXT;
        let _ = writeln!(
            text,
            "  replay tag     SHA-512/256 of [{},{}) = {tag}",
            at.start, at.end
        );
    }
}

/// A command as a person reads it.
fn describe(cmd: &Command) -> String {
    match cmd {
        Command::NextNodeHop { id, mac } => {
            let (id, mac) = (hex::encode(id.0), hex::encode(mac));
            format!("next_node_hop id={id} mac={mac}")
        }
        Command::Recipient(r) => format!("recipient {}", hex::encode(r.0)),
        Command::SurbReply(s) => format!("surb_reply {}", hex::encode(s.0)),
        Command::NodeDelay(ms) => format!("node_delay {ms} ms"),
    }
}

/// Unwrap and describe the result; returns the hop's output.
fn unwrap_report(
    text: &mut String,
    key: &PrivateKey,
    mut packet: Box<[u8; PACKET_LEN]>,
) -> Option<Vec<u8>> {
    let public = hex::encode(key.public_key().as_bytes().get(..8).unwrap_or_default());
    let _ = writeln!(
        text,
        "unwrap with the key whose public key starts {public}:"
    );
    let out = match unwrap(key, &mut packet) {
        Ok(out) => out,
        Err(e) => {
            let _ = writeln!(text, "  result         {}: {e}", error_class(&e));
            return None;
        }
    };
    let _ = writeln!(text, "  result         {}", action_class(&out.action));
    for cmd in out.commands.iter() {
        let _ = writeln!(text, "  command        {}", describe(cmd));
    }
    let output = match out.action {
        Action::Forward { next_hop, delay } => {
            let when =
                delay.map_or_else(|| "now (no node_delay)".into(), |d| format!("after {d} ms"));
            let _ = writeln!(text, "  send to        {} {when}", hex::encode(next_hop.0));
            None
        }
        Action::Deliver { recipient, payload } => {
            let head = hex::encode(payload.get(..32).unwrap_or_default());
            let _ = writeln!(text, "  deliver to     {}", hex::encode(recipient.0));
            let len = payload.len();
            let _ = writeln!(text, "  payload        {head}… ({len} bytes, tag verified)");
            Some(payload.to_vec())
        }
        Action::SurbReply {
            recipient,
            surb_id,
            encrypted_reply: reply,
        } => {
            let (to, surb) = (hex::encode(recipient.0), hex::encode(surb_id.0));
            let _ = writeln!(text, "  reply to       {to} for SURB {surb}");
            let len = reply.len();
            let _ = writeln!(
                text,
                "  encrypted reply {len} bytes (only the SURB's creator can check it)"
            );
            Some(reply.to_vec())
        }
    };
    if output.is_some() {
        return output;
    }
    let tag = hex::encode(replay_tag(&packet).0);
    let _ = writeln!(text, "  outgoing replay tag {tag}");
    Some(packet.to_vec())
}

/// `kemsphinx inspect FILE [--key KEYFILE] [--out FILE]`.
#[must_use]
pub fn main(args: &[OsString]) -> ExitCode {
    match run(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("kemsphinx inspect: {e}\nusage: {USAGE}");
            ExitCode::from(2)
        }
    }
}

/// Parse the arguments, inspect, print, write `--out`.
fn run(args: &[OsString]) -> Result<bool, String> {
    let (mut file, mut key, mut out) = (None, None, None);
    let mut it = args.iter().map(Path::new);
    while let Some(arg) = it.next() {
        match arg.to_str() {
            Some("--key") => key = Some(it.next().ok_or("--key needs a file")?),
            Some("--out") => out = Some(it.next().ok_or("--out needs a file")?),
            Some(other) if other.starts_with("--") => {
                return Err(format!("unknown option {other}"));
            }
            _ if file.is_none() => file = Some(arg),
            _ => return Err(format!("unexpected argument {}", arg.display())),
        }
    }
    let file = file.ok_or("missing FILE")?;
    let (input, encoding) = hex_or_binary(&read_input(file)?);
    let key = key.map(read_private_key).transpose()?;
    let found = inspect(&input, key.as_ref())?;
    let encoded = match encoding {
        Encoding::Hex => "hex",
        Encoding::Binary => "binary",
    };
    println!("{} ({encoded})", file.display());
    print!("{}", found.text);
    if let (Some(path), Some(bytes)) = (out, &found.output) {
        let data = match encoding {
            Encoding::Hex => format!("{}\n", hex::encode(bytes)).into_bytes(),
            Encoding::Binary => bytes.clone(),
        };
        std::fs::write(path, data).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(key.is_none() || found.output.is_some())
}
