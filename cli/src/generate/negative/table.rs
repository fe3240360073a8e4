//! Every negative case as data: its id, the operation, how its input is
//! made from the base scenario, the outcome this library gives (by hand
//! from SPEC.md §7), a note, and why, where the reference behaves
//! otherwise, this library's outcome is its own choice.

use kemsphinx::geometry::layout::{packet, payload};
use kemsphinx::geometry::{
    ENCRYPTED_REPLY_LEN, HOPS, MLKEM_EK_LEN, PACKET_LEN, PAYLOAD_LEN, PRIVATE_KEY_LEN,
    PUBLIC_KEY_LEN, SURB_KEYS_LEN, SURB_LEN, X25519_LEN,
};
use kemsphinx_support::{P_PLUS_2, small_order_encodings};

/// One case.
pub(super) struct Spec {
    /// The id, less the `neg-own-` every id starts with.
    pub(super) id: String,
    pub(super) op: Op,
    /// `expect`, and `expect_detail` (this library's error in `Debug` form).
    pub(super) expect: Expect,
    pub(super) note: String,
    /// `library_choice`: why this library gives `expect` where the
    /// reference does otherwise (required exactly there).
    pub(super) choice: Option<&'static str>,
}

/// The outcome class and, for an error, its `Debug` form.
pub(super) type Expect = (&'static str, Option<String>);

/// The operation and how each of its inputs is made.
pub(super) enum Op {
    /// `unwrap` of `packet` with node `key`'s private key.
    Unwrap { packet: Packet, key: usize },
    /// The operation that takes this input, given it edited and every
    /// other input as in the base scenario.
    Edited(Input, Edit),
    /// `create_packet` (or, with `surb`, `create_surb`) over the base nodes
    /// with the base commands, but hop `hop` given `commands`.
    Create {
        surb: bool,
        hop: usize,
        commands: Vec<Cmd>,
    },
}

/// An input of the base scenario, and the operation that takes it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Input {
    /// The SURB (`reply_from_surb`).
    Surb,
    /// The reply payload (`reply_from_surb`).
    Payload,
    /// The SURB's encrypted reply (`decrypt_reply`).
    EncryptedReply,
    /// The SURB's keys (`decrypt_reply`).
    SurbKeys,
    /// Node 0's private key (`load_private_key`).
    PrivateKey,
    /// Node 0's public key (`load_public_key`).
    PublicKey,
}

impl Input {
    /// The input's name in a length error, and its one length.
    fn length(self) -> (&'static str, usize) {
        match self {
            Self::Surb => ("Surb", SURB_LEN),
            Self::Payload => ("Payload", PAYLOAD_LEN),
            Self::EncryptedReply => ("EncryptedReply", ENCRYPTED_REPLY_LEN),
            Self::SurbKeys => ("SurbKeys", SURB_KEYS_LEN),
            Self::PrivateKey => ("PrivateKey", PRIVATE_KEY_LEN),
            Self::PublicKey => ("PublicKey", PUBLIC_KEY_LEN),
        }
    }
}

/// A packet made from the base scenario.
pub(super) enum Packet {
    /// The forward packet as hop `i` receives it, edited.
    Forward(usize, Edit),
    /// The reply built from the base SURB as hop `i` receives it, edited.
    Reply(usize, Edit),
    /// 16,150 zero bytes.
    Zero,
    /// The forward packet built with hop `i`'s commands area made of these
    /// parts (valid MACs throughout), as hop `i` receives it.
    RawArea(usize, Vec<Part>),
    /// The forward packet rebuilt with hop 0's KEM ciphertext as this edit
    /// of the packet leaves it, and the secret hop 0 derives from it.
    Rebuilt(Edit),
    /// The forward packet as hop `i` receives it, its payload deciphered
    /// under hop `i`'s layer, edited, and enciphered again.
    Reenciphered(usize, Edit),
}

/// A change to an input's bytes.
#[derive(Clone)]
pub(super) enum Edit {
    Keep,
    /// Cut or zero-extended to this length.
    Resize(usize),
    /// Bit `.1` of byte `.0` flipped.
    Flip(usize, u8),
    /// These bytes written from byte `.0` on.
    Put(usize, Vec<u8>),
    /// In a public key, the ML-KEM encapsulation key's first 12-bit
    /// coefficient set to this value.
    Coefficient(u16),
    /// In SURB keys, key block `i` taken from another SURB's keys.
    OtherKeyBlock(usize),
}

/// A command, as the cases use them.
#[derive(Clone, Copy)]
pub(super) enum Cmd {
    /// Hop 0's real `next_node_hop` (node 1's id and the real MAC).
    NextHop,
    /// A `next_node_hop` to node 1 with an all-zero MAC.
    NextHopZeroMac,
    Delay(u32),
    /// A recipient of 32 bytes 0x52.
    Recipient,
    /// A SURB id of 16 bytes 0x53.
    SurbReply,
}

/// A piece of a raw commands area.
#[derive(Clone, Copy)]
pub(super) enum Part {
    Whole(Cmd),
    /// The first `n` bytes of the command's encoding.
    Head(Cmd, usize),
    Bytes(&'static [u8]),
}

/// A case.
fn spec(
    id: impl Into<String>,
    op: Op,
    expect: Expect,
    note: impl Into<String>,
    choice: Option<&'static str>,
) -> Spec {
    Spec {
        id: id.into(),
        op,
        expect,
        note: note.into(),
        choice,
    }
}

/// A success of this class.
fn ok(class: &'static str) -> Expect {
    (class, None)
}

/// An error of this class, with its `Debug` form.
fn err(class: &'static str, detail: impl Into<String>) -> Expect {
    (class, Some(detail.into()))
}

/// A length error.
fn length(input: &str, expected: usize, got: usize) -> Expect {
    let detail = format!("Length {{ input: {input}, expected: {expected}, got: {got} }}");
    err("err_length", detail)
}

/// `unwrap` of `packet` with node `key`.
fn unwrap(packet: Packet, key: usize) -> Op {
    Op::Unwrap { packet, key }
}

/// `unwrap` of the forward packet hop 0 receives, edited, with node 0.
fn hop0(edit: Edit) -> Op {
    unwrap(Packet::Forward(0, edit), 0)
}

/// The terminal hop.
const TERMINAL: usize = HOPS - 1;

const LOW_ORDER: &str = "a small-order X25519 point (any encoding) is refused with err_kem \
                         before the MAC, where the reference panics (SPEC.md section 2.1)";
const STRICT: &str = "commands are parsed strictly: each at most once, and exactly one action \
                      (forward, deliver, or SURB reply) per hop (SPEC.md section 4)";
const EXACT: &str = "every input has exactly one length and any other is refused with \
                     err_length before any work (SPEC.md section 8); the reference processes \
                     some other lengths";
const CONSISTENT: &str = "a private key is validated once, at load: its stored encapsulation \
                          key must be the one d derives (SPEC.md section 2.5)";
const CHECKED: &str = "creation checks every hop's commands as its hop will parse them, and \
                       writes nothing unless all can be created (SPEC.md section 4)";

/// Every case, in the order of the file.
pub(super) fn table() -> Vec<Spec> {
    let mut cases = packets();
    cases.extend(commands());
    cases.extend(lengths());
    cases.extend(keys());
    cases.extend(replies());
    cases.extend(creation());
    cases
}

/// `unwrap` of packets of the right length.
fn packets() -> Vec<Spec> {
    let mut cases = Vec::new();
    for version in [[1, 0], [0, 1], [0xff, 0xff]] {
        cases.push(spec(
            format!("unwrap-version-{}", hex::encode(version)),
            hop0(Edit::Put(packet::VERSION.start, version.to_vec())),
            err("err_version", "Version"),
            "the only version is 00 00; checked before any KEM work",
            None,
        ));
    }
    for point in small_order_encodings() {
        cases.push(spec(
            format!("unwrap-x25519-{}", point.name),
            hop0(Edit::Put(packet::KEM_X25519.start, point.u.to_vec())),
            err("err_kem", "Kem"),
            format!(
                "X25519 half of the KEM ciphertext replaced by {}: the Diffie-Hellman output \
                 is all zero, refused before the MAC",
                point.what
            ),
            Some(LOW_ORDER),
        ));
    }
    cases.push(spec(
        "unwrap-all-zero-packet",
        unwrap(Packet::Zero, 0),
        err("err_kem", "Kem"),
        "16,150 zero bytes: version 00 00 is valid and the X25519 half is u = 0",
        Some(LOW_ORDER),
    ));
    // An X25519 public key is reduced mod p, so its bit 255 is always clear
    // and flipping it sets it.
    let non_canonical = [
        (
            "bit255",
            "the real ephemeral key with the unused bit 255 set",
            Edit::Flip(packet::KEM_X25519.end - 1, 7),
        ),
        (
            "p-plus-2",
            "u = p + 2 (a non-canonical encoding of u = 2, large order)",
            Edit::Put(packet::KEM_X25519.start, P_PLUS_2.to_vec()),
        ),
    ];
    for (name, what, edit) in non_canonical {
        cases.push(spec(
            format!("unwrap-x25519-noncanonical-{name}-tampered"),
            hop0(edit.clone()),
            err("err_mac", "Mac"),
            format!(
                "X25519 half of a valid packet replaced by {what}: accepted and reduced as \
                 X25519 does, but the adapter and combiner hash the bytes as sent, so the \
                 shared secret, and with it the MAC key, differ"
            ),
            None,
        ));
        cases.push(spec(
            format!("unwrap-x25519-noncanonical-{name}-valid"),
            unwrap(Packet::Rebuilt(edit), 0),
            ok("ok_forward"),
            format!(
                "hop 0's KEM ciphertext has as X25519 half {what}, and the header was built \
                 with the secret the hop derives from those bytes: it unwraps, showing that a \
                 non-canonical u of large order is reduced, not refused (SPEC.md section 2.1)"
            ),
            None,
        ));
    }
    let flip = |name: &str, at: usize, what: &str| {
        spec(
            format!("unwrap-bitflip-{name}"),
            hop0(Edit::Flip(at, 2)),
            err("err_mac", "Mac"),
            format!("one bit flipped at byte {at}, in {what}"),
            None,
        )
    };
    cases.push(flip(
        "x25519-half",
        packet::KEM_X25519.start + 7,
        "the X25519 half of the KEM ciphertext (a different, valid point)",
    ));
    cases.push(flip(
        "mlkem-half",
        packet::KEM_MLKEM.start + 600,
        "the ML-KEM half of the KEM ciphertext: implicit rejection gives a pseudo-random secret",
    ));
    for block in 0..HOPS {
        cases.push(flip(
            &format!("routing-block-{block}"),
            packet::routing_block(block).start + 41 + 300 * block,
            &format!(
                "the routing information, in the 1,202-byte block that hop {block} will decrypt"
            ),
        ));
    }
    cases.push(flip("mac", packet::MAC.start + 31, "the header MAC"));
    cases.extend([
        spec(
            "unwrap-bitflip-payload-forward-hop",
            hop0(Edit::Flip(packet::PAYLOAD.start + 9_000, 6)),
            ok("ok_forward"),
            "one payload bit flipped before a forward hop: the payload is not authenticated \
             there; the terminal hop's tag check catches it",
            None,
        ),
        spec(
            "unwrap-wrong-hop-key",
            unwrap(Packet::Forward(0, Edit::Keep), 1),
            err("err_mac", "Mac"),
            "the packet for hop 0 given to hop 1",
            None,
        ),
        spec(
            "unwrap-terminal-nonzero-tag",
            unwrap(
                Packet::Reenciphered(TERMINAL, Edit::Flip(payload::TAG.end - 1, 0)),
                TERMINAL,
            ),
            err("err_payload_tag", "PayloadTag"),
            "terminal hop's packet re-enciphered with the 32-byte tag set to 00...01 (header \
             untouched)",
            None,
        ),
        spec(
            "unwrap-surb-reply-terminal-bitflip",
            unwrap(
                Packet::Reply(TERMINAL, Edit::Flip(packet::PAYLOAD.start + 77, 0)),
                TERMINAL,
            ),
            ok("ok_reply"),
            "a SURB reply with one payload bit flipped before its terminal hop: handed over \
             unchecked; decrypt_reply refuses it",
            None,
        ),
    ]);
    cases
}

/// `unwrap` of malformed commands areas with a valid MAC, at hop 0 or the
/// terminal hop.
fn commands() -> Vec<Spec> {
    use Cmd::{Delay, NextHop, Recipient, SurbReply};
    use Part::{Bytes, Head, Whole};
    let raw = |name: &str, hop: usize, parts: Vec<Part>, detail: &str, note: &str, choice| {
        spec(
            format!("unwrap-cmd-{name}"),
            unwrap(Packet::RawArea(hop, parts), hop),
            err("err_command", detail),
            format!(
                "{note}; built with valid MACs by the hidden raw-commands creator, given to hop \
                 {hop}"
            ),
            choice,
        )
    };
    let delay = Whole(Delay(10));
    vec![
        raw(
            "unknown-id",
            0,
            vec![Bytes(&[0x04])],
            "Command(UnknownId(4))",
            "commands area 04 00 ...: 0x04 is not a command id",
            None,
        ),
        raw(
            "truncated-body",
            0,
            vec![delay, Whole(NextHop), Head(Recipient, 12)],
            "Command(Truncated)",
            "node_delay, next_node_hop, then a recipient command cut by the end of the area \
             after 11 of its 32 body bytes",
            None,
        ),
        raw(
            "nonzero-after-null",
            0,
            vec![Whole(NextHop), Bytes(&[0; 16]), Bytes(&[0x01])],
            "Command(TrailingData)",
            "next_node_hop, null, then 01 in the last byte of the area",
            None,
        ),
        raw(
            "two-next-node-hop",
            0,
            vec![Whole(NextHop), Head(NextHop, 17)],
            "Command(Truncated)",
            "next_node_hop twice: two take 130 bytes, so the second is cut after 16 of its 64 \
             body bytes; this library reports the truncation, which it meets before a repeat \
             could be seen",
            None,
        ),
        raw(
            "two-node-delay",
            0,
            vec![delay, delay, Whole(NextHop)],
            "Command(Duplicate)",
            "node_delay twice, then next_node_hop (with the real next MAC)",
            Some(STRICT),
        ),
        raw(
            "next-node-hop-with-surb-reply",
            0,
            vec![Whole(NextHop), Whole(SurbReply)],
            "Command(NoAction)",
            "next_node_hop together with surb_reply: two actions",
            Some(STRICT),
        ),
        raw(
            "delay-only",
            0,
            vec![delay],
            "Command(NoAction)",
            "node_delay alone at hop 0: no action",
            Some(STRICT),
        ),
        raw(
            "two-surb-reply",
            TERMINAL,
            vec![Whole(Recipient), Whole(SurbReply), Whole(SurbReply)],
            "Command(Duplicate)",
            "terminal hop: recipient then surb_reply twice",
            None,
        ),
        raw(
            "two-recipient",
            TERMINAL,
            vec![Whole(Recipient), Whole(Recipient)],
            "Command(Duplicate)",
            "terminal hop: recipient twice",
            Some(STRICT),
        ),
        raw(
            "empty-terminal",
            TERMINAL,
            vec![],
            "Command(NoAction)",
            "terminal hop with an all-zero commands area: no recipient",
            Some(STRICT),
        ),
        raw(
            "surb-reply-without-recipient",
            TERMINAL,
            vec![Whole(SurbReply)],
            "Command(NoAction)",
            "terminal hop: surb_reply alone",
            Some(STRICT),
        ),
    ]
}

/// Every input that enters through a slice or a key loader, one byte too
/// short and one too long (the packet also empty, 1 byte and doubled).
fn lengths() -> Vec<Spec> {
    let mut cases = Vec::new();
    for len in [0, 1, PACKET_LEN - 1, PACKET_LEN + 1, 2 * PACKET_LEN] {
        cases.push(spec(
            format!("unwrap-length-{len}"),
            hop0(Edit::Resize(len)),
            length("Packet", PACKET_LEN, len),
            "the valid hop-0 packet cut or zero-extended; a packet is exactly 16,150 bytes",
            // The reference refuses only packets shorter than a header.
            (len > 1).then_some(EXACT),
        ));
    }
    let key = "a valid key cut or zero-extended";
    let inputs = [
        (
            Input::Surb,
            "reply-from-surb-surb",
            "a valid SURB cut or zero-extended; a SURB is exactly 6,058 bytes",
            None,
        ),
        (
            Input::Payload,
            "reply-from-surb-payload",
            "a reply payload is exactly 10,156 bytes",
            Some(EXACT),
        ),
        (
            Input::EncryptedReply,
            "decrypt-reply-reply",
            "the real encrypted reply cut or zero-extended; it is exactly 10,188 bytes",
            Some(EXACT),
        ),
        (
            Input::SurbKeys,
            "decrypt-reply-keys",
            "SURB keys are exactly 320 bytes (five 64-byte blocks)",
            None,
        ),
        (Input::PrivateKey, "load-private-key-len", key, None),
        (Input::PublicKey, "load-public-key-len", key, None),
    ];
    for (input, id, note, choice) in inputs {
        let (name, exact) = input.length();
        for len in [exact - 1, exact + 1] {
            cases.push(spec(
                format!("{id}-{len}"),
                Op::Edited(input, Edit::Resize(len)),
                length(name, exact, len),
                note,
                choice,
            ));
        }
    }
    cases
}

/// Keys of the right length whose contents are wrong (or, where noted,
/// right after all).
fn keys() -> Vec<Spec> {
    // A private key is X25519 secret ‖ ML-KEM encapsulation key ‖ d ‖ z.
    let (ek, d) = (X25519_LEN, X25519_LEN + MLKEM_EK_LEN);
    let private = |edit| Op::Edited(Input::PrivateKey, edit);
    let mut cases = vec![
        spec(
            "load-private-key-ek-bitflip",
            private(Edit::Flip(ek + 100, 3)),
            err("err_key", "Key(Inconsistent)"),
            "one bit flipped in the stored ML-KEM encapsulation key: it no longer matches the \
             one d||z derives",
            Some(CONSISTENT),
        ),
        spec(
            "load-private-key-d-bitflip",
            private(Edit::Flip(d, 0)),
            err("err_key", "Key(Inconsistent)"),
            "one bit flipped in the ML-KEM seed d: the encapsulation key it derives no longer \
             matches the stored one",
            Some(CONSISTENT),
        ),
        spec(
            "load-private-key-z-bitflip",
            private(Edit::Flip(d + 32, 0)),
            ok("ok"),
            "one bit flipped in the implicit-rejection seed z: the encapsulation key depends \
             only on d, so the key is consistent and loads (no check can see z); it \
             decapsulates valid ciphertexts as before and gives other pseudo-random secrets \
             for invalid ones",
            None,
        ),
    ];
    for value in [3_329, 4_095, 3_328] {
        let (expect, choice) = if value < 3_329 {
            (ok("ok"), None)
        } else {
            let why = "the FIPS 203 modulus check runs when a public key is loaded, not at its \
                       first encapsulation (SPEC.md section 2.5)";
            (err("err_key", "Key(MlKemEncapsulationKey)"), Some(why))
        };
        cases.push(spec(
            format!("load-public-key-mlkem-coefficient-{value}"),
            Op::Edited(Input::PublicKey, Edit::Coefficient(value)),
            expect,
            format!(
                "the first coefficient of the ML-KEM encapsulation key set to {value} (q = \
                 3,329; FIPS 203 requires every coefficient < q)"
            ),
            choice,
        ));
    }
    for point in small_order_encodings() {
        cases.push(spec(
            format!("load-public-key-x25519-{}", point.name),
            Op::Edited(Input::PublicKey, Edit::Put(0, point.u.to_vec())),
            err("err_key", "Key(X25519LowOrder)"),
            format!(
                "X25519 half {}: every Diffie-Hellman with it is all zero",
                point.what
            ),
            Some(
                "a public key whose X25519 half has small order is refused at load: every \
                 encapsulation to it would have a public X25519 secret (SPEC.md section 2.5)",
            ),
        ));
    }
    cases
}

/// SURB replies, their decryption, and creation refusing commands it
/// cannot create.
fn replies() -> Vec<Spec> {
    let mut cases = vec![
        spec(
            "decrypt-reply-valid",
            Op::Edited(Input::EncryptedReply, Edit::Keep),
            ok("ok"),
            "control: the right keys and the untouched reply decrypt",
            None,
        ),
        spec(
            "decrypt-reply-bitflip",
            Op::Edited(Input::EncryptedReply, Edit::Flip(5_000, 7)),
            err("err_payload_tag", "PayloadTag"),
            "one bit flipped in the encrypted reply",
            None,
        ),
    ];
    for block in 0..=HOPS {
        cases.push(spec(
            format!("decrypt-reply-wrong-key-block-{block}"),
            Op::Edited(Input::SurbKeys, Edit::OtherKeyBlock(block)),
            err("err_payload_tag", "PayloadTag"),
            format!(
                "key block {block} of 5 replaced by the same block of another SURB's keys \
                 (blocks 0-3 undo the hops, last hop first; block 4 is the reply's own key)"
            ),
            None,
        ));
    }
    cases.push(spec(
        "reply-from-surb-version-0001",
        Op::Edited(Input::Surb, Edit::Put(packet::VERSION.start, vec![0, 1])),
        err("err_version", "Version"),
        "a SURB whose header version is 00 01: refused when the SURB is read, before any reply \
         is built",
        Some(
            "a SURB's header version is checked when the SURB is read, so no reply is built \
             from a SURB no hop would accept",
        ),
    ));
    cases
}

/// Creation refusing commands it cannot create; nothing is written.
fn creation() -> Vec<Spec> {
    use Cmd::{Delay, NextHopZeroMac, Recipient, SurbReply};
    let create = |surb, hop, commands| Op::Create {
        surb,
        hop,
        commands,
    };
    vec![
        spec(
            "create-packet-commands-too-long",
            create(false, 1, vec![Delay(1), Recipient]),
            err("err_command", "Command(TooLong)"),
            "hop 1 given node_delay and recipient: with the next_node_hop the creator adds that \
             is 103 bytes, more than the 82-byte area",
            Some(CHECKED),
        ),
        spec(
            "create-packet-next-node-hop-supplied",
            create(false, 0, vec![NextHopZeroMac]),
            err("err_command", "Command(ReservedCommand)"),
            "hop 0 given a next_node_hop: only the creator writes it (with the real MAC)",
            None,
        ),
        spec(
            "create-packet-terminal-without-recipient",
            create(false, TERMINAL, vec![Delay(1)]),
            err("err_command", "Command(NoAction)"),
            "terminal hop given only node_delay: no action for it",
            Some(CHECKED),
        ),
        spec(
            "create-packet-terminal-surb-reply",
            create(false, TERMINAL, vec![Recipient, SurbReply]),
            err("err_command", "Command(WrongTerminalAction)"),
            "a forward packet whose terminal hop would hand the payload over as a SURB reply",
            Some(CHECKED),
        ),
        spec(
            "create-surb-terminal-deliver",
            create(true, TERMINAL, vec![Recipient]),
            err("err_command", "Command(WrongTerminalAction)"),
            "a SURB whose terminal hop has recipient but no surb_reply: the reply would be \
             delivered as a forward payload",
            Some(CHECKED),
        ),
    ]
}
