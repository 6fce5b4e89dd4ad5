//! The policy author's CLI without the server: `policy check FILE`, `policy test FILE CASES`.
//! The same commands are `airlock policy …` in the server binary.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = policy::cli::run(&args);
    print!("{}", out.stdout);
    eprint!("{}", out.stderr);
    std::process::exit(out.code);
}
