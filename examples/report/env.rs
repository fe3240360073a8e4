//! The environment a report was measured in, and what code runs in it.

use std::process::Command;

use kemsphinx::hazmat::kem_backends;
use kemsphinx_support::bench::MlKemAlone;

use crate::reference::{self, Reference};

/// Facts about the machine and the build.
pub(crate) struct Environment {
    pub(crate) cpu: String,
    pub(crate) vendor: String,
    pub(crate) family_model: String,
    pub(crate) logical_cpus: usize,
    pub(crate) cpu_mhz: Option<f64>,
    pub(crate) governor: String,
    pub(crate) features: Vec<(&'static str, bool)>,
    /// What runs: (what, how).
    pub(crate) used: Vec<(&'static str, String)>,
    pub(crate) reference: Result<&'static Reference, String>,
    pub(crate) os: String,
    pub(crate) kernel: String,
    pub(crate) rustc: String,
    pub(crate) version: &'static str,
    pub(crate) commit: String,
    pub(crate) profile: &'static str,
    pub(crate) host: String,
}

/// First value of a `key : value` line of /proc/cpuinfo.
fn cpuinfo(key: &str) -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    text.lines()
        .find(|l| l.split(':').next().is_some_and(|k| k.trim() == key))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_owned())
}

/// The 1-, 5- and 15-minute load averages (other processes competing for
/// the CPUs while measuring).
pub(crate) fn load() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(
        |_| "unknown".into(),
        |l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
    )
}

/// Output of a command, trimmed, or `unknown`.
pub(crate) fn run(cmd: &str, args: &[&str]) -> String {
    Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "unknown".into())
}

/// The KEM backend and the code its two halves run in this process.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KemPaths {
    /// `kemsphinx::KEM_BACKEND`.
    pub(crate) backend: &'static str,
    /// X25519's implementation.
    pub(crate) x25519: &'static str,
    /// ML-KEM-768's code path.
    pub(crate) mlkem: &'static str,
}

/// The KEM backend and its two halves as they run in this process.
pub(crate) fn kem_paths() -> KemPaths {
    let x25519 = match kemsphinx::KEM_BACKEND {
        "libcrux" if kem_backends::x25519_asm_active() => {
            "s2n-bignum verified assembly (graviola), chosen at run time"
        }
        "libcrux" => "HACL* portable 64-bit (libcrux-curve25519)",
        _ => "x25519-dalek 3 (curve25519-dalek, portable)",
    };
    KemPaths {
        backend: kemsphinx::KEM_BACKEND,
        x25519,
        mlkem: MlKemAlone::new().path(),
    }
}

/// The X25519 path `unwrap_batch` takes in this process.
pub(crate) fn batch_path() -> String {
    match kem_backends::x25519_batch_path() {
        "ifma" => "x25519-batch, AVX-512 IFMA: 8 points per ladder (`ifma`)".into(),
        "avx2" => "x25519-batch, AVX2: 4 points per ladder (`avx2`)".into(),
        other => format!("the KEM backend's X25519, a point at a time (`{other}`)"),
    }
}

/// The AEZ implementation `aez5` picks on this CPU.
pub(crate) fn aez_path() -> String {
    describe_aez(aez5::Aez::new(&[0; 48]).backend())
}

/// A readable name of an AEZ implementation.
pub(crate) fn describe_aez(b: aez5::Backend) -> String {
    match b {
        aez5::Backend::Portable => "portable (AES rounds through aes::hazmat)".into(),
        aez5::Backend::AesNi => "AES-NI, state in registers".into(),
        aez5::Backend::Vaes => "VAES, 256-bit".into(),
        aez5::Backend::Vaes512 => "VAES-512 (AVX-512)".into(),
        other => format!("{other:?}"),
    }
}

impl Environment {
    pub(crate) fn read() -> Self {
        #[cfg(target_arch = "x86_64")]
        let features = vec![
            ("aes", std::arch::is_x86_feature_detected!("aes")),
            ("avx2", std::arch::is_x86_feature_detected!("avx2")),
            ("sha", std::arch::is_x86_feature_detected!("sha")),
            ("vaes", std::arch::is_x86_feature_detected!("vaes")),
            ("avx512f", std::arch::is_x86_feature_detected!("avx512f")),
            (
                "avx512ifma",
                std::arch::is_x86_feature_detected!("avx512ifma"),
            ),
            ("bmi2", std::arch::is_x86_feature_detected!("bmi2")),
            ("adx", std::arch::is_x86_feature_detected!("adx")),
        ];
        #[cfg(not(target_arch = "x86_64"))]
        let features = Vec::new();
        let flag = |name: &str| features.iter().any(|(n, on)| *n == name && *on);
        let KemPaths {
            backend: kem,
            x25519,
            mlkem,
        } = kem_paths();
        let used = vec![
            ("KEM backend (`kemsphinx::KEM_BACKEND`)", kem.to_owned()),
            ("X25519", x25519.into()),
            ("X25519 of a batch unwrap (`unwrap_batch`)", batch_path()),
            ("ML-KEM-768", mlkem.into()),
            ("AEZ (`aez5::Aez::backend()`)", aez_path()),
            (
                "AES-256-CTR (header stream, `aes` crate)",
                if flag("aes") {
                    "AES-NI"
                } else {
                    "bitsliced software"
                }
                .into(),
            ),
            (
                "SHA-256 (HMAC, HKDF)",
                if flag("sha") { "SHA-NI" } else { "software" }.into(),
            ),
        ];
        let cpu = cpuinfo("model name").unwrap_or_else(|| "unknown".into());
        let vendor = cpuinfo("vendor_id").unwrap_or_else(|| "unknown".into());
        let family = cpuinfo("cpu family").and_then(|f| f.parse().ok());
        let reference = reference::for_cpu(&reference::Cpu {
            vendor: &vendor,
            model_name: &cpu,
            family,
            avx512f: flag("avx512f"),
        });
        let dirty = !run("git", &["status", "--porcelain", "--untracked-files=no"]).is_empty();
        Self {
            family_model: format!(
                "family {}, model {}, stepping {}",
                cpuinfo("cpu family").unwrap_or_default(),
                cpuinfo("model").unwrap_or_default(),
                cpuinfo("stepping").unwrap_or_default()
            ),
            cpu,
            vendor,
            logical_cpus: std::thread::available_parallelism().map_or(1, usize::from),
            cpu_mhz: cpuinfo("cpu MHz").and_then(|m| m.parse().ok()),
            governor: std::fs::read_to_string(
                "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
            )
            .map_or_else(
                |_| "not readable (no cpufreq in this VM)".into(),
                |g| g.trim().to_owned(),
            ),
            features,
            used,
            reference,
            os: std::fs::read_to_string("/etc/os-release")
                .ok()
                .and_then(|t| {
                    t.lines().find_map(|l| {
                        l.strip_prefix("PRETTY_NAME=")
                            .map(|v| v.trim_matches('"').to_owned())
                    })
                })
                .unwrap_or_else(|| std::env::consts::OS.into()),
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map_or_else(|_| "unknown".into(), |k| k.trim().to_owned()),
            rustc: run("rustc", &["--version"]),
            version: env!("CARGO_PKG_VERSION"),
            commit: format!(
                "{}{}",
                run("git", &["rev-parse", "--short=12", "HEAD"]),
                if dirty { " (modified)" } else { "" }
            ),
            profile: if cfg!(debug_assertions) {
                "debug (numbers not meaningful)"
            } else {
                "release"
            },
            host: run("hostname", &[]),
        }
    }
}
