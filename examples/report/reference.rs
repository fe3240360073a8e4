//! The Go reference's figures (Katzenpost v0.0.97 KEMSphinx,
//! MLKEM768-X25519; `../shared/reference/performance.md`), per CPU model:
//! a speed-up is only quoted against the reference measured on the CPU
//! model this report runs on.

/// One operation of the reference: its time in each run (seconds), bytes
/// and allocations per operation.
pub(crate) struct Figure {
    pub(crate) op: &'static str,
    pub(crate) runs: &'static [f64],
    pub(crate) bytes: u64,
    pub(crate) allocs: u64,
}

/// The reference measured on one CPU model.
pub(crate) struct Reference {
    /// The machine kind, as performance.md names it.
    pub(crate) kind: &'static str,
    /// How it was measured.
    pub(crate) how: &'static str,
    pub(crate) figures: &'static [Figure],
}

impl Reference {
    pub(crate) fn get(&self, op: &str) -> Option<&'static Figure> {
        self.figures.iter().find(|f| f.op == op)
    }
}

impl Figure {
    /// The fastest and slowest run.
    pub(crate) fn range(&self) -> (f64, f64) {
        let lo = self.runs.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = self.runs.iter().copied().fold(0.0, f64::max);
        (lo, hi)
    }
}

const fn f(op: &'static str, runs: &'static [f64], bytes: u64, allocs: u64) -> Figure {
    Figure {
        op,
        runs,
        bytes,
        allocs,
    }
}

// The reference's decapsulation re-reads the 1,280-byte key every time.
pub(crate) use kemsphinx_support::bench::cases::DECAPS_FROM_ENCODING;

/// The Xeon machine kind (AES-NI, AVX2, AVX-512 incl. IFMA, SHA-NI, VAES).
const XEON: Reference = Reference {
    kind: "Xeon",
    how: "median of 7, one run; no \"decrypt reply\" benchmark",
    figures: &[
        f("KEM key generation", &[326e-6], 12_440, 30),
        f("KEM encapsulation", &[471e-6], 14_408, 50),
        f(DECAPS_FROM_ENCODING, &[431e-6], 12_656, 38),
        f("build forward packet", &[2.14e-3], 180_183, 399),
        f("create SURB", &[2.40e-3], 126_358, 356),
        f("unwrap one hop", &[390e-6], 32_556, 81),
        f("unwrap all four hops", &[1.67e-3], 130_184, 323),
        f("reply from SURB", &[15.6e-6], 28_368, 14),
        f("full request/reply", &[7.40e-3], 648_588, 1_467),
        f("AEZ encipher, 10,188 B", &[10.7e-6], 10_656, 10),
    ],
};

/// The AMD EPYC machine kind (Zen 3: AES-NI, VAES, AVX2, no AVX-512).
const EPYC_ZEN3: Reference = Reference {
    kind: "AMD EPYC (Zen 3)",
    how: "median of 7, two runs (shown as a range)",
    figures: &[
        f("KEM key generation", &[261e-6, 303e-6], 12_440, 30),
        f("KEM encapsulation", &[455e-6, 461e-6], 14_440, 51),
        f(DECAPS_FROM_ENCODING, &[391e-6, 408e-6], 12_656, 38),
        f("build forward packet", &[1.96e-3, 2.02e-3], 180_308, 403),
        f("create SURB", &[1.83e-3, 1.98e-3], 127_157, 362),
        f("unwrap one hop", &[444e-6, 441e-6], 32_556, 81),
        f("unwrap all four hops", &[1.73e-3, 1.69e-3], 130_184, 323),
        f("reply from SURB", &[12.4e-6, 14.0e-6], 28_368, 14),
        f("decrypt reply", &[29.1e-6, 37.1e-6], 53_296, 51),
        f("full request/reply", &[6.92e-3, 8.07e-3], 649_514, 1_477),
        f("AEZ encipher, 10,188 B", &[6.5e-6, 5.5e-6], 10_656, 10),
    ],
};

/// The reference's own published baseline (an Intel i5-6300U laptop, one
/// core): another CPU, shown for orientation only.
pub(crate) const PUBLISHED: &[(&str, f64)] = &[
    ("KEM key generation", 348e-6),
    ("KEM encapsulation", 515e-6),
    (DECAPS_FROM_ENCODING, 460e-6),
    ("build forward packet", 2.43e-3),
    ("create SURB", 2.33e-3),
    ("unwrap one hop", 515e-6),
    ("unwrap all four hops", 2.04e-3),
    ("reply from SURB", 11.6e-6),
    ("full request/reply", 8.89e-3),
];

/// What identifies the CPU: /proc/cpuinfo's `vendor_id`, `model name` and
/// `cpu family`, and whether it has AVX-512F.
pub(crate) struct Cpu<'a> {
    pub(crate) vendor: &'a str,
    pub(crate) model_name: &'a str,
    pub(crate) family: Option<u32>,
    pub(crate) avx512f: bool,
}

/// The reference measured on this CPU model, or why there is none. The
/// rule: an Intel CPU whose model name says Xeon is the Xeon kind; an AMD
/// CPU of family 25 (Zen 3 / Zen 4) whose model name says EPYC and which
/// has no AVX-512 (Zen 4 has it) is the EPYC Zen 3 kind; nothing else has
/// figures.
pub(crate) fn for_cpu(cpu: &Cpu<'_>) -> Result<&'static Reference, String> {
    match cpu.vendor {
        "GenuineIntel" if cpu.model_name.contains("Xeon") => Ok(&XEON),
        "AuthenticAMD"
            if cpu.model_name.contains("EPYC") && cpu.family == Some(25) && !cpu.avx512f =>
        {
            Ok(&EPYC_ZEN3)
        }
        _ => Err(format!(
            "the reference has not been measured on this CPU model ({}, {}, family {}); \
             performance.md has figures for the Xeon and the AMD EPYC (Zen 3) machine kinds only",
            cpu.vendor,
            cpu.model_name,
            cpu.family.map_or("unknown".into(), |f| f.to_string())
        )),
    }
}
