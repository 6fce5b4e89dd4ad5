//! The `airlock` binary; the command line and its commands are in `server::cli`.

// Many small allocations cross threads (handlers → ledger → SQLite worker); glibc's
// allocator spent about a fifth of the server's CPU on them under load.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    server::cli::main()
}
