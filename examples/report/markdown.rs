//! The report as Markdown: the environment, the targets, the tables of
//! operations, primitives, AEZ, KEM backends and peers ([`crate::batch`]
//! holds the batch section, [`crate::sections`] the rest).

use std::fmt::Write as _;

use crate::Results;
use crate::harness::{Timing, find};
use crate::measure::{CTR, UNWRAP, aez_name};
use crate::reference::PUBLISHED;
use crate::targets::{self, times_range};
use crate::units::{count, duration, seconds, seconds_range};

pub(crate) fn report(r: &Results, when: &str, stem: &str) -> String {
    let mut m = String::new();
    let _ = writeln!(
        m,
        "# kemsphinx performance report — {when}, {}\n",
        r.env.host
    );
    if r.quick {
        let _ = writeln!(
            m,
            "**A `--quick` run: few samples, a smoke test of the report, not evidence.**\n"
        );
    }
    let _ = writeln!(
        m,
        "Produced by `cargo run --release --example report`. The machine is a shared, noisy VM: \
        figures are medians of {} samples and move by ±20 % between runs. Every table is measured \
        interleaved (its rows take turns, one sample each per round), so compare the ratios within \
        a table. The Go reference's figures are the ones measured on this CPU model \
        (`shared/reference/performance.md`); a speed-up is never quoted against another CPU.\n",
        r.plan.samples
    );
    let busy = |l: &str| {
        l.split_whitespace()
            .next()
            .and_then(|x| x.parse::<f64>().ok())
            .is_some_and(|x| x >= 1.0)
    };
    if busy(&r.load.0) || busy(&r.load.1) {
        let _ = writeln!(
            m,
            "**The machine was busy while this ran (1-minute load average {} at the start, \
             {} at the end; see the environment).** Other processes slow every operation \
             here, so the absolute times are inflated and the speed-ups against the \
             reference's figures (measured in another run) understated; the ratios within \
             a table, measured interleaved, still compare like with like.\n",
            r.load.0.split_whitespace().next().unwrap_or("?"),
            r.load.1.split_whitespace().next().unwrap_or("?")
        );
    }
    environment(&mut m, r);
    // Drawn from this report's JSON by the index (crate::index), beside it.
    let _ = writeln!(
        m,
        "## Charts\n\n\
         ![Each operation against the Go reference on this CPU model and the Rust peers]({stem}-operations.svg)\n\n\
         ![Where an unwrap's time goes: its primitives, end to end]({stem}-unwrap.svg)\n\n\
         ![The latency distribution of one unwrap, up to the slowest]({stem}-latency.svg)\n\n\
         All reports, on every machine: [the results index](README.md).\n"
    );
    let _ = writeln!(
        m,
        "## Conformance before timing\n\n{} vectors (reference + AEZ) passed before anything was \
        timed; the report refuses to run otherwise. The rustcrypto build passed them too before it \
        was timed.\n",
        r.vectors_passed
    );
    targets_table(&mut m, r);
    operations(&mut m, r);
    primitives(&mut m, r);
    crate::batch::section(&mut m, r);
    aez(&mut m, r);
    crate::sections::backends(&mut m, r);
    crate::sections::peers(&mut m, r);
    crate::sections::rest(&mut m, r);
    m
}

fn environment(m: &mut String, r: &Results) {
    let e = &r.env;
    let mhz = e.cpu_mhz.unwrap_or(0.0);
    let _ = writeln!(m, "## Environment\n\n| | |\n| --- | --- |");
    let _ = writeln!(
        m,
        "| CPU | {} ({}, {}; {} logical CPUs, {mhz} MHz reported) |",
        e.cpu, e.vendor, e.family_model, e.logical_cpus
    );
    let _ = writeln!(m, "| frequency governor | {} |", e.governor);
    let _ = writeln!(
        m,
        "| load average (1, 5, 15 min) | {} when measuring began, {} when it ended |",
        r.load.0, r.load.1
    );
    let feats: Vec<String> = e
        .features
        .iter()
        .map(|(f, on)| format!("{f} {}", if *on { "yes" } else { "no" }))
        .collect();
    let _ = writeln!(m, "| CPU features | {} |", feats.join(", "));
    for (what, how) in &e.used {
        let _ = writeln!(m, "| {what} | {how} |");
    }
    let _ = writeln!(
        m,
        "| Go reference figures | {} |",
        match &e.reference {
            Ok(re) => format!(
                "the {} machine kind ({}), matched on the CPU's vendor and model name",
                re.kind, re.how
            ),
            Err(why) => format!("none: {why}"),
        }
    );
    let _ = writeln!(m, "| OS, kernel | {}, Linux {} |", e.os, e.kernel);
    let _ = writeln!(m, "| rustc | {} |", e.rustc);
    let _ = writeln!(m, "| kemsphinx | {} at {} |", e.version, e.commit);
    let _ = writeln!(m, "| build profile | {} |", e.profile);
    let _ = writeln!(
        m,
        "| cycle counters | not available (`perf stat` reports cycles unsupported in this VM); \
        \"est. cycles\" = median × {mhz:.0} MHz |\n"
    );
}

fn targets_table(m: &mut String, r: &Results) {
    let _ = writeln!(m, "## Targets (issues 10, 11 and 32)\n");
    let _ = writeln!(
        m,
        "| issue | target | bound | this run | status |\n| ---: | --- | --- | --- | --- |"
    );
    for x in targets::check(r) {
        let _ = writeln!(
            m,
            "| {} | {} | {} | {} | {} |",
            x.issue,
            x.what,
            x.bound,
            x.measured,
            x.status.text()
        );
    }
    let _ = writeln!(
        m,
        "\nAgainst the reference: the Go reference measured on this CPU model only; where it was \
        measured twice, a target is met when it holds against both runs. The AEZ rows use the \
        implementation `aez5::Aez::new` picks on this CPU, timed interleaved with AES-256-CTR \
        (below). Issue 32's rows compare `unwrap_batch` with `unwrap` per packet, on the same \
        packets in this run (the batch section below), against the issue's bound for this \
        CPU's batch path.\n"
    );
}

fn operations(m: &mut String, r: &Results) {
    let mhz = r.env.cpu_mhz.unwrap_or(0.0);
    let re = r.env.reference.as_ref().ok();
    let kind = re.map_or("this CPU model", |re| re.kind);
    let _ = writeln!(m, "## Operations\n");
    let _ = writeln!(
        m,
        "| operation | median | min | max | samples × iters | ops/s | est. cycles | B/op | allocs/op \
        | Go on {kind} | speed-up | Go, published (i5-6300U: another CPU, orientation only) |"
    );
    let _ = writeln!(
        m,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for o in &r.ops {
        let go = re.and_then(|re| re.get(&o.name));
        let pubd = PUBLISHED.iter().find(|g| g.0 == o.name);
        let ours = o.secs();
        let _ = writeln!(
            m,
            "| {} | {} | {} | {} | {} × {} | {} | {} | {} | {} | {} | {} | {} |",
            o.name,
            duration(o.median()),
            duration(o.min()),
            duration(o.max()),
            o.samples.len(),
            o.iterations,
            count(o.ops_per_sec() as u64),
            count((ours * mhz * 1e6) as u64),
            count(o.bytes as u64),
            o.allocs,
            go.map_or("—".into(), |g| {
                let (lo, hi) = g.range();
                format!(
                    "{} ({} B, {} allocs)",
                    seconds_range(lo, hi),
                    count(g.bytes),
                    g.allocs
                )
            }),
            go.map_or("—".into(), |g| {
                let (lo, hi) = g.range();
                times_range(lo / ours, hi / ours)
            }),
            pubd.map_or("—".into(), |g| seconds(g.1)),
        );
    }
    match &r.env.reference {
        Ok(re) if re.get("decrypt reply").is_none() => {
            let _ = writeln!(
                m,
                "\n—: the reference has no benchmark of this operation on the {} machine kind \
                (\"decrypt reply\" was measured on the EPYC only; decapsulation with a loaded key \
                has no counterpart: the reference re-reads the key for every packet).",
                re.kind
            );
        }
        Ok(_) => {
            let _ = writeln!(
                m,
                "\n—: no counterpart in the reference (it re-reads the key for every packet)."
            );
        }
        Err(why) => {
            let _ = writeln!(m, "\n—: {why}.");
        }
    }
    let _ = writeln!(
        m,
        "\nThe i5-6300U column is the reference's own published baseline, measured on a laptop \
        CPU that is not this one; no ratio is taken against it.\n"
    );
}

fn primitives(m: &mut String, r: &Results) {
    let _ = writeln!(m, "## Unwrap and the primitives it performs\n");
    let _ = writeln!(
        m,
        "Timed interleaved with one unwrap, each on the code the library runs: X25519 through \
        `kemsphinx::hazmat::kem_backends::x25519` for the selected backend (`{}`), ML-KEM on the \
        selected backend's crate and code path.\n",
        kemsphinx::KEM_BACKEND
    );
    let _ = writeln!(
        m,
        "| | median | B/op | allocs/op |\n| --- | ---: | ---: | ---: |"
    );
    for p in &r.parts {
        let _ = writeln!(
            m,
            "| {} | {} | {} | {} |",
            if p.name == UNWRAP {
                format!("**{}**", p.name)
            } else {
                p.name.clone()
            },
            duration(p.median()),
            count(p.bytes as u64),
            p.allocs
        );
    }
    let sum = targets::parts_sum(&r.parts);
    if let Some(u) = find(&r.parts, UNWRAP) {
        let _ = writeln!(
            m,
            "\nSum of the primitives: {}. **Unwrap one hop = {:.2} × the sum of its primitives** \
            ({} against {}; target ≤ 1.15).\n",
            seconds(sum),
            u.secs() / sum,
            duration(u.median()),
            seconds(sum)
        );
    }
}

fn aez(m: &mut String, r: &Results) {
    let mhz = r.env.cpu_mhz.unwrap_or(0.0);
    let cpb = |x: &Timing| x.secs() * mhz * 1e6 / 10_188.0;
    let _ = writeln!(m, "## AEZ and AES-256-CTR over 10,188 bytes\n");
    let chosen = aez5::Aez::new(&[0; 48]).backend();
    let Some(ctr) = find(&r.aez, CTR) else {
        return;
    };
    let _ = writeln!(
        m,
        "Every AEZ implementation this CPU has (`aez5`; key setup included, as per hop), \
        interleaved with AES-256-CTR (`aes` + `ctr`) over the same bytes. `Aez::new` picks \
        **{chosen:?}** here.\n"
    );
    let _ = writeln!(
        m,
        "| | encipher | decipher | ÷ AES-256-CTR (enc / dec) | ≈ cycles/byte (enc) |\n\
        | --- | ---: | ---: | ---: | ---: |"
    );
    let _ = writeln!(
        m,
        "| AES-256-CTR | {} | | 1 | {:.2} |",
        duration(ctr.median()),
        cpb(ctr)
    );
    for &b in &r.aez_backends {
        let (Some(e), Some(d)) = (
            find(&r.aez, &aez_name("encipher", b)),
            find(&r.aez, &aez_name("decipher", b)),
        ) else {
            continue;
        };
        let _ = writeln!(
            m,
            "| AEZ, {}{} | {} | {} | {:.2} / {:.2} | {:.2} |",
            crate::env::describe_aez(b),
            if b == chosen { " (chosen)" } else { "" },
            duration(e.median()),
            duration(d.median()),
            e.secs() / ctr.secs(),
            d.secs() / ctr.secs(),
            cpb(e)
        );
    }
    if let Some(g) = r
        .env
        .reference
        .as_ref()
        .ok()
        .and_then(|re| re.get("AEZ encipher, 10,188 B"))
    {
        let (lo, hi) = g.range();
        let _ = writeln!(
            m,
            "\nThe Go reference's AEZ on this CPU model: {}.",
            seconds_range(lo, hi)
        );
    }
    let _ = writeln!(m);
}
