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

/// Milliseconds since the epoch as "2026-12-02 09:30:05 UTC" (the same text on the
/// server and in the browser, so hydration matches).
pub fn utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
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

/// What a [`Ticker`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Tick {
    /// Time left before `at` ("12:04 left", "expired").
    Left,
    /// Time since `at` ("5 min ago").
    Ago,
    /// A grant's end ("ends in 5 min", "expired").
    EndsIn,
}

impl Tick {
    pub fn text(self, at_ms: i64, now_ms: i64) -> String {
        match self {
            Tick::Left => countdown(Some(at_ms), now_ms),
            Tick::Ago => format!("{} ago", span(now_ms - at_ms)),
            Tick::EndsIn if at_ms > now_ms => format!("ends in {}", span(at_ms - now_ms)),
            Tick::EndsIn => "expired".to_string(),
        }
    }
}

/// A time that moves on by itself: rendered by the server at `now_ms` (the server's
/// clock), then ticking once a second in the browser, still on the server's clock.
#[island]
pub fn Ticker(
    tick: Tick,
    at_ms: i64,
    now_ms: i64,
    #[prop(optional)] class: Option<String>,
    #[prop(optional)] testid: Option<String>,
) -> impl IntoView {
    let clock = start_clock(now_ms);
    view! { <span class=class data-testid=testid>{move || tick.text(at_ms, clock.now_ms.get())}</span> }
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
        assert_eq!(Tick::EndsIn.text(600_000, 0), "ends in 10 min");
        assert_eq!(Tick::EndsIn.text(0, 10), "expired");
        assert_eq!(Tick::Ago.text(0, 42_000), "42 s ago");
    }
}
