//! The page's clock, aligned with the server's (ages and expiry countdowns), ticking
//! once a second in the browser.

use leptos::prelude::*;

#[derive(Clone, Copy)]
pub struct Clock {
    pub now_ms: RwSignal<i64>,
}

/// A clock that starts at the server's time and follows the browser's from then on.
pub fn start_clock(server_now_ms: i64) -> Clock {
    let now_ms = RwSignal::new(server_now_ms);
    #[cfg(feature = "hydrate")]
    {
        let offset = server_now_ms - js_sys::Date::now() as i64;
        if let Ok(h) = set_interval_with_handle(
            move || now_ms.set(js_sys::Date::now() as i64 + offset),
            std::time::Duration::from_secs(1),
        ) {
            on_cleanup(move || h.clear());
        }
    }
    Clock { now_ms }
}

/// "42 s", "5 min", "3 h", "2 d".
pub fn span(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min", s / 60),
        3600..=86_399 => format!("{} h", s / 3600),
        _ => format!("{} d", s / 86_400),
    }
}

/// Countdown text for an expiry: "12:04 left", or "expired".
pub fn countdown(expires_at_ms: Option<i64>, now_ms: i64) -> String {
    match expires_at_ms {
        None => "no expiry".into(),
        Some(t) if t <= now_ms => "expired".into(),
        Some(t) => {
            let s = (t - now_ms) / 1000;
            if s >= 3600 {
                format!("{}:{:02}:{:02} left", s / 3600, s / 60 % 60, s % 60)
            } else {
                format!("{}:{:02} left", s / 60, s % 60)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_and_countdowns_read_naturally() {
        assert_eq!(span(42_000), "42 s");
        assert_eq!(span(301_000), "5 min");
        assert_eq!(countdown(Some(10_000 + 725_000), 10_000), "12:05 left");
        assert_eq!(countdown(Some(5), 10), "expired");
        assert_eq!(countdown(Some(3_725_000), 0), "1:02:05 left");
    }
}
