//! The report's other sections: the KEM backends side by side, the Rust
//! peers, tail latency, throughput, memory, code and sizes.

use std::fmt::Write as _;

use crate::Results;
use crate::children::RUSTCRYPTO_FEATURES;
use crate::units::{count, duration, seconds};

pub(crate) fn backends(m: &mut String, r: &Results) {
    let _ = writeln!(m, "## The KEM backends side by side\n");
    let b = match &r.backends {
        Ok(b) => b,
        Err(why) => {
            let _ = writeln!(m, "Not measured: {why}.\n");
            return;
        }
    };
    let _ = writeln!(
        m,
        "This report built twice — as run (`{}`), and with `--no-default-features --features \
        {RUSTCRYPTO_FEATURES}` in its own target directory (`{}`) — each running the same \
        operations in a child process; {} rounds, the two builds in turn, {} samples each per \
        round; the figure is the median of the rounds' medians.\n",
        b.this.kem_backend, b.other.kem_backend, b.rounds, b.samples
    );
    let _ = writeln!(
        m,
        "| | {} | {} |\n| --- | --- | --- |\n| X25519 | {} | {} |\n| ML-KEM-768 | {} | {} |\n",
        b.this.kem_backend,
        b.other.kem_backend,
        b.this.x25519,
        b.other.x25519,
        b.this.mlkem,
        b.other.mlkem
    );
    let _ = writeln!(
        m,
        "| operation | {} | {} | {} ÷ {} |\n| --- | ---: | ---: | ---: |",
        b.this.kem_backend, b.other.kem_backend, b.other.kem_backend, b.this.kem_backend
    );
    for (name, x, y) in &b.rows {
        let _ = writeln!(
            m,
            "| {name} | {} | {} | {:.2}× |",
            seconds(*x),
            seconds(*y),
            y / x
        );
    }
    let _ = writeln!(m);
}

pub(crate) fn peers(m: &mut String, r: &Results) {
    let _ = writeln!(m, "## Beside the Rust peers (benches/peers)\n");
    let rows = match &r.peers {
        Ok(rows) => rows,
        Err(why) => {
            let _ = writeln!(m, "Not measured: {why}.\n");
            return;
        }
    };
    let rounds = rows.first().map_or(0, |p| p.rounds);
    let _ = writeln!(
        m,
        "`benches/peers` (its own workspace, release build, default features) run by this report: \
        kemsphinx beside Nym's classical Sphinx (`sphinx-packet` 0.8) and Outfox (`nym-outfox` \
        1.21.6) in one process, interleaved round by round, {rounds} rounds of batches of 20; \
        medians of the rounds' per-operation means. The peers' figures leave out serialising the \
        outgoing packet (kemsphinx works in place). Payload sizes are what each crate's builder \
        is given.\n"
    );
    let get = |imp: &str, payload: u64, op: &str| {
        rows.iter()
            .find(|p| p.implementation == imp && p.payload == payload && p.operation == op)
            .map(|p| p.median)
    };
    let mut keys: Vec<(String, u64)> = Vec::new();
    for p in rows {
        if !keys.contains(&(p.implementation.clone(), p.payload)) {
            keys.push((p.implementation.clone(), p.payload));
        }
    }
    let ours = keys.iter().find(|k| k.0.starts_with("kemsphinx")).cloned();
    let base = |op: &str| ours.as_ref().and_then(|k| get(&k.0, k.1, op));
    let _ = writeln!(
        m,
        "| implementation | payload | create, 4 hops | ÷ kemsphinx | unwrap one hop | ÷ kemsphinx |\n\
        | --- | ---: | ---: | ---: | ---: | ---: |"
    );
    for (imp, payload) in &keys {
        let cell = |op: &str| {
            let v = get(imp, *payload, op);
            (
                v.map_or("—".into(), seconds),
                match (v, base(op)) {
                    (Some(v), Some(b)) => format!("{:.2}×", v / b),
                    _ => "—".into(),
                },
            )
        };
        let (c, cr) = cell("create, 4 hops");
        let (u, ur) = cell("unwrap one hop");
        let _ = writeln!(
            m,
            "| {imp} | {} B | {c} | {cr} | {u} | {ur} |",
            count(*payload)
        );
    }
    let _ = writeln!(
        m,
        "\n\"÷ kemsphinx\" above 1 means the peer is slower than kemsphinx in this run.\n"
    );
}

pub(crate) fn rest(m: &mut String, r: &Results) {
    let _ = writeln!(
        m,
        "## Tail latency of unwrap ({} unwraps in a row, one hop)\n",
        count(r.tail_n as u64)
    );
    let _ = writeln!(
        m,
        "| p50 | p95 | p99 | p99.9 | max |\n| ---: | ---: | ---: | ---: | ---: |"
    );
    let row: Vec<String> = r.tail.iter().map(|(_, d)| duration(*d)).collect();
    let _ = writeln!(m, "| {} |", row.join(" | "));
    let _ = writeln!(
        m,
        "\nUnwrap does no data-dependent work of that size: the far tail is the VM being \
        descheduled (timer ticks, the host, the other vCPU), which is why it moves most between runs."
    );

    let _ = writeln!(
        m,
        "\n## Throughput on several cores (one loaded key shared by all threads)\n"
    );
    let _ = writeln!(
        m,
        "| threads | unwraps/s | scaling |\n| ---: | ---: | ---: |"
    );
    let one = r.threads.first().map_or(1.0, |t| t.1);
    for (threads, ops) in &r.threads {
        let _ = writeln!(
            m,
            "| {threads} | {} | {:.2} × |",
            count(*ops as u64),
            ops / one
        );
    }

    let _ = writeln!(m, "\n## Memory and code\n\n| | |\n| --- | --- |");
    let kib = |v: Option<u64>| v.map_or("not measured".into(), |v| format!("{} KiB", count(v)));
    let bytes = |v: Option<u64>| v.map_or("not measured".into(), |v| format!("{} B", count(v)));
    let _ = writeln!(
        m,
        "| peak RSS, process that loads four keys | {} |",
        kib(r.rss.loaded_keys)
    );
    let _ = writeln!(
        m,
        "| peak RSS, same process after a full request/reply | {} |",
        kib(r.rss.after_request_reply)
    );
    let _ = writeln!(
        m,
        "| stack of one unwrap (smallest thread stack that completes it, less an empty thread's) | {} |",
        r.stack.map_or("not measured".into(), |(u, e)| format!(
            "{} B ({} − {})",
            count(u.saturating_sub(e) as u64),
            count(u as u64),
            count(e as u64)
        ))
    );
    let no_alloc = r
        .ops
        .iter()
        .filter(|o| !o.name.starts_with("KEM"))
        .all(|o| o.allocs == 0);
    let _ = writeln!(
        m,
        "| heap allocations on packet paths | {} |",
        if no_alloc {
            "none"
        } else {
            "SOME — see the table"
        }
    );
    let _ = writeln!(
        m,
        "| `.text` of a program that only unwraps (`examples/unwrap_only.rs`) | {} |",
        bytes(r.code.unwrap_only)
    );
    let _ = writeln!(
        m,
        "| `.text` of an empty Rust program, same compiler | {} |",
        bytes(r.code.empty_program)
    );

    let _ = writeln!(
        m,
        "\n## Sizes (bytes; identical to the reference's by construction)\n"
    );
    let _ = writeln!(
        m,
        "| public key | private key | KEM ciphertext | packet | header | SURB | SURB keys | payload | encrypted reply | replay tag |"
    );
    let _ = writeln!(
        m,
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    use kemsphinx::geometry::*;
    let _ = writeln!(
        m,
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
        count(PUBLIC_KEY_LEN as u64),
        count(PRIVATE_KEY_LEN as u64),
        count(KEM_CIPHERTEXT_LEN as u64),
        count(PACKET_LEN as u64),
        count(HEADER_LEN as u64),
        count(SURB_LEN as u64),
        SURB_KEYS_LEN,
        count(PAYLOAD_LEN as u64),
        count(ENCRYPTED_REPLY_LEN as u64),
        REPLAY_TAG_LEN
    );
}
