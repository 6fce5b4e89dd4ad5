//! The page's clock, aligned with the server's (ages and expiry countdowns), ticking
//! once a second in the browser.

#[cfg(test)]
use crate::i18n::Locale;
use crate::i18n::Tr;
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
    let (year, month, day, h, m, s) = civil(ms);
    format!("{year:04}-{month:02}-{day:02} {h:02}:{m:02}:{s:02} UTC")
}

/// (year, month, day, hour, minute, second) in UTC.
pub fn civil(ms: i64) -> (i64, i64, i64, i64, i64, i64) {
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
    (year, month, day, rest / 3600, rest % 3600 / 60, rest % 60)
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

/// Countdown text for an expiry: "12:04 left", or "expired" (in `tr`'s language).
pub fn countdown(tr: Tr, expires_at_ms: Option<i64>, now_ms: i64) -> String {
    match expires_at_ms {
        None => tr.t("clock.no_expiry").into(),
        Some(t) if t <= now_ms => tr.t("clock.expired").into(),
        Some(t) => {
            let s = (t - now_ms) / 1000;
            let left = if s >= 3600 {
                format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
            } else {
                format!("{}:{:02}", s / 60, s % 60)
            };
            tr.f("clock.left", &[("time", &left)])
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
    pub fn text(self, tr: Tr, at_ms: i64, now_ms: i64) -> String {
        match self {
            Tick::Left => countdown(tr, Some(at_ms), now_ms),
            Tick::Ago => tr.f("clock.ago", &[("span", &tr.span(now_ms - at_ms))]),
            Tick::EndsIn if at_ms > now_ms => tr.f("clock.ends_in", &[("span", &tr.span(at_ms - now_ms))]),
            Tick::EndsIn => tr.t("clock.expired").to_string(),
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
    let tr = crate::i18n::use_tr();
    view! { <span class=class data-testid=testid>{move || tick.text(tr, at_ms, clock.now_ms.get())}</span> }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_and_countdowns_read_naturally() {
        assert_eq!(span(42_000), "42 s");
        assert_eq!(span(301_000), "5 min");
        let en = Tr(Locale::En);
        assert_eq!(countdown(en, Some(10_000 + 725_000), 10_000), "12:05 left");
        assert_eq!(countdown(en, Some(5), 10), "expired");
        assert_eq!(countdown(en, Some(3_725_000), 0), "1:02:05 left");
        assert_eq!(Tick::EndsIn.text(en, 600_000, 0), "ends in 10 min");
        assert_eq!(Tick::EndsIn.text(en, 0, 10), "expired");
        assert_eq!(Tick::Ago.text(en, 0, 42_000), "42 s ago");
        let zh = Tr(Locale::ZhCn);
        assert_eq!(countdown(zh, Some(725_000), 0), "剩余 12:05");
        assert_eq!(Tick::Ago.text(zh, 0, 300_000), "5 分钟前");
    }
}
