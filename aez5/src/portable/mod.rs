//! The portable path: every AES round through `aes::hazmat::cipher_round`
//! and `cipher_round_par` (one `AESENC` each). The `aes` crate runs them on
//! AES-NI when the CPU has it, and otherwise on its constant-time bitsliced
//! implementation (always, under `--cfg aes_backend="soft"`).
//!
//! AEZ-tiny, AEZ-hash and AEZ-prf always run here; AEZ-core runs here when
//! no fast path was chosen (see `crate::x86`).

mod core;
mod hash;
mod tbc;
mod tiny;
