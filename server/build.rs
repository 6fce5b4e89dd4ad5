// The migrations are embedded by `sqlx::migrate!`: a changed or added migration must
// rebuild the server even when no Rust file changed.
fn main() {
    println!("cargo:rerun-if-changed=../migrations");
}
