//! The wasm entry point: hydrate the islands of the server-rendered page.

#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    app::hydrate_islands();
}
