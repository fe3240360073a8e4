//! `kemsphinx`: conformance vectors, packet inspection and key generation
//! for KEMSphinx (MLKEM768-X25519), as [`USAGE`] says.

use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

use kemsphinx_cli::conformance::Report;

const USAGE: &str = "usage: kemsphinx verify [--json] PATH...\n\
       kemsphinx generate [--seed HEX32] DIR\n\
       kemsphinx inspect FILE [--key KEYFILE] [--out FILE]\n\
       kemsphinx keygen --out DIR [--name NAME]\n\n\
  verify   run vector files or folders (kemsphinx-vectors/1) and end with\n\
           `N passed, M failed`\n\
  generate write the own conformance corpus, deterministically from a seed\n\
  inspect  show a packet's or SURB's layout; with --key, unwrap it\n\
  keygen   write a key pair as PEM (private key file mode 0600)";

fn main() -> ExitCode {
    // Arguments as the operating system gives them: a path need not be
    // UTF-8 (it is printed lossily).
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    match args.split_first() {
        Some((cmd, rest)) if cmd == "verify" => verify(rest),
        Some((cmd, rest)) if cmd == "generate" => kemsphinx_cli::generate::main(rest),
        Some((cmd, rest)) if cmd == "inspect" => kemsphinx_cli::inspect::main(rest),
        Some((cmd, rest)) if cmd == "keygen" => kemsphinx_cli::keygen::main(rest),
        Some((cmd, _)) if cmd == "-h" || cmd == "--help" || cmd == "help" => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

/// `kemsphinx verify`.
fn verify(args: &[OsString]) -> ExitCode {
    let (options, paths): (Vec<&OsString>, Vec<&OsString>) = args
        .iter()
        .partition(|a| a.as_encoded_bytes().starts_with(b"--"));
    if let Some(bad) = options.iter().find(|a| **a != "--json") {
        eprintln!("unknown option {}\n{USAGE}", bad.to_string_lossy());
        return ExitCode::from(2);
    }
    let json = !options.is_empty();
    if paths.is_empty() {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    }
    let mut report = Report::default();
    for p in paths {
        let path = Path::new(p);
        if !path.exists() {
            eprintln!("no such file or folder: {}", path.display());
            return ExitCode::from(2);
        }
        report.verify_path(path);
    }
    if json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.failure_lines());
        println!("{}", report.summary());
    }
    if report.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
