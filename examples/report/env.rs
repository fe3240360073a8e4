//! The environment a report was measured in.

use std::process::Command;

/// Facts about the machine and the build.
pub(crate) struct Environment {
    pub(crate) cpu: String,
    pub(crate) logical_cpus: usize,
    pub(crate) cpu_mhz: Option<f64>,
    pub(crate) governor: String,
    pub(crate) features: Vec<(&'static str, bool)>,
    pub(crate) used: Vec<(&'static str, String)>,
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

/// Output of a command, trimmed, or `unknown`.
fn run(cmd: &str, args: &[&str]) -> String {
    Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "unknown".into())
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
            ("bmi2", std::arch::is_x86_feature_detected!("bmi2")),
        ];
        #[cfg(not(target_arch = "x86_64"))]
        let features = Vec::new();
        let flag = |name: &str| features.iter().any(|(n, on)| *n == name && *on);
        let used = vec![
            (
                "AES (AEZ, header stream)",
                if flag("aes") {
                    "AES-NI"
                } else {
                    "bitsliced software"
                }
                .into(),
            ),
            (
                "ML-KEM-768 (libcrux)",
                if libcrux_platform::simd256_support() {
                    "AVX2"
                } else {
                    "portable"
                }
                .into(),
            ),
            (
                "SHA-256 (HMAC, HKDF)",
                if flag("sha") { "SHA-NI" } else { "software" }.into(),
            ),
            ("X25519 (libcrux/HACL*)", "portable 64-bit".into()),
        ];
        let dirty = !run("git", &["status", "--porcelain", "--untracked-files=no"]).is_empty();
        Self {
            cpu: cpuinfo("model name").unwrap_or_else(|| "unknown".into()),
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
