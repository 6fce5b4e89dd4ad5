//! The dashboard's languages: English and 简体中文. Every user-facing string is looked up
//! by key in a message catalogue (`app/locales/<code>.json`, flat `key → text`; `{name}`
//! marks a value filled in; the sentences only the server writes into its answers are in
//! `<code>.server.json`, left out of the browser's wasm). The language of a request: the person's choice (stored with
//! their account), else the `airlock_lang` cookie (signed-out pages), else the browser's
//! `Accept-Language`, else English. Tests fail when a key used in the code is missing from
//! a catalogue, or the catalogues' keys differ.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::OnceLock;

/// A language the dashboard speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum Locale {
    #[default]
    #[serde(rename = "en")]
    En,
    #[serde(rename = "zh-CN")]
    ZhCn,
}

/// The cookie that carries the choice of someone signed out.
pub const COOKIE: &str = "airlock_lang";

impl Locale {
    pub const ALL: [Locale; 2] = [Locale::En, Locale::ZhCn];

    /// The BCP 47 tag (`<html lang>`, the cookie, the catalogue's file name).
    pub fn code(self) -> &'static str {
        match self {
            Locale::En => "en",
            Locale::ZhCn => "zh-CN",
        }
    }

    /// The language's own name, as the switch offers it.
    pub fn name(self) -> &'static str {
        match self {
            Locale::En => "English",
            Locale::ZhCn => "简体中文",
        }
    }

    /// A tag as browsers and people write it: `zh`, `zh-CN`, `zh-Hans`, `zh_cn` → 简体中文;
    /// `en`, `en-GB` → English; anything else → none.
    pub fn from_tag(tag: &str) -> Option<Locale> {
        let tag = tag.trim().to_ascii_lowercase().replace('_', "-");
        let primary = tag.split('-').next().unwrap_or("");
        match primary {
            "en" => Some(Locale::En),
            // Traditional-script Chinese is not offered: simplified is closer than English.
            "zh" => Some(Locale::ZhCn),
            _ => None,
        }
    }

    /// The best language for an `Accept-Language` header (quality values honoured).
    pub fn negotiate(accept_language: &str) -> Option<Locale> {
        let mut best: Option<(f32, usize, Locale)> = None;
        for (i, part) in accept_language.split(',').enumerate() {
            let mut bits = part.split(';');
            let tag = bits.next().unwrap_or("");
            let q = bits
                .find_map(|b| b.trim().strip_prefix("q="))
                .and_then(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            if q <= 0.0 {
                continue;
            }
            if let Some(l) = Locale::from_tag(tag) {
                // Higher quality wins; among equals, the one listed first.
                if best.is_none_or(|(bq, _, _)| q > bq) {
                    best = Some((q, i, l));
                }
            }
        }
        best.map(|(_, _, l)| l)
    }
}

const EN: &str = include_str!("../locales/en.json");
const ZH_CN: &str = include_str!("../locales/zh-CN.json");
// The sentences only the server writes (`srv.*`: answers to decisions, refusals): kept out
// of the browser's wasm, which never looks them up.
#[cfg(not(feature = "hydrate"))]
const EN_SERVER: &str = include_str!("../locales/en.server.json");
#[cfg(not(feature = "hydrate"))]
const ZH_CN_SERVER: &str = include_str!("../locales/zh-CN.server.json");

/// The catalogue files of each language (`Locale as usize`): the dashboard's, and on the
/// server the server's.
#[cfg(not(feature = "hydrate"))]
const SOURCES: [&[&str]; 2] = [&[EN, EN_SERVER], &[ZH_CN, ZH_CN_SERVER]];
#[cfg(feature = "hydrate")]
const SOURCES: [&[&str]; 2] = [&[EN], &[ZH_CN]];

fn catalogue(l: Locale) -> &'static HashMap<String, String> {
    static EN_MAP: OnceLock<HashMap<String, String>> = OnceLock::new();
    static ZH_MAP: OnceLock<HashMap<String, String>> = OnceLock::new();
    let cell = match l {
        Locale::En => &EN_MAP,
        Locale::ZhCn => &ZH_MAP,
    };
    cell.get_or_init(|| {
        let mut map = HashMap::new();
        for text in SOURCES[l as usize] {
            map.extend(serde_json::from_str::<HashMap<String, String>>(text).unwrap_or_default());
        }
        map
    })
}

/// The text of `key` in `l`; English when the catalogue lacks it (tests keep that from
/// happening), the key itself as a last resort.
pub fn text(l: Locale, key: &'static str) -> &'static str {
    catalogue(l)
        .get(key)
        .or_else(|| catalogue(Locale::En).get(key))
        .map_or(key, String::as_str)
}

/// Marks a catalogue key written somewhere other than a lookup (a table of pages, say), so
/// the test that checks every key in the code sees it.
pub const fn tr_key(key: &'static str) -> &'static str {
    key
}

/// A `said.*` text with holes, split at them: `literals` has one more entry than `names`.
struct Pattern {
    literals: Vec<&'static str>,
    names: Vec<&'static str>,
}

impl Pattern {
    /// `None` for a text without holes, or with two holes side by side (ambiguous).
    fn of(text: &'static str) -> Option<Pattern> {
        let (mut literals, mut names, mut rest) = (Vec::new(), Vec::new(), text);
        while let Some(open) = rest.find('{') {
            let close = open + rest[open..].find('}')?;
            literals.push(&rest[..open]);
            names.push(&rest[open + 1..close]);
            rest = &rest[close + 1..];
        }
        literals.push(rest);
        if names.is_empty() {
            return None;
        }
        let side_by_side = literals[1..literals.len() - 1].iter().any(|l| l.is_empty());
        (!side_by_side).then_some(Pattern { literals, names })
    }

    /// The holes' values when `s` is this text with them filled (each at least a character).
    fn matches<'s>(&self, s: &'s str) -> Option<Vec<(&'static str, &'s str)>> {
        let mut rest = s.strip_prefix(self.literals[0])?;
        let last = self.literals.len() - 1;
        let mut values = Vec::with_capacity(self.names.len());
        for (i, name) in self.names.iter().enumerate() {
            let lit = self.literals[i + 1];
            let end = if i + 1 == last {
                rest.strip_suffix(lit).map(str::len)?
            } else {
                // At least one character before the next fixed text.
                let first = rest.chars().next()?.len_utf8();
                rest[first..].find(lit)? + first
            };
            if end == 0 {
                return None;
            }
            values.push((*name, &rest[..end]));
            rest = &rest[end + lit.len()..];
        }
        rest.is_empty().then_some(values)
    }
}

/// The server's `said.*` sentences by their English text: exact ones, and patterns, the
/// most specific (longest fixed text) first.
struct Said {
    exact: HashMap<&'static str, &'static str>,
    patterns: Vec<(Pattern, &'static str)>,
}

fn said() -> &'static Said {
    static SAID: OnceLock<Said> = OnceLock::new();
    SAID.get_or_init(|| {
        let mut said = Said {
            exact: HashMap::new(),
            patterns: Vec::new(),
        };
        for (k, v) in catalogue(Locale::En).iter().filter(|(k, _)| k.starts_with("said.")) {
            match Pattern::of(v) {
                Some(p) => said.patterns.push((p, k.as_str())),
                None => {
                    said.exact.insert(v.as_str(), k.as_str());
                }
            }
        }
        let fixed = |p: &Pattern| p.literals.iter().map(|l| l.len()).sum::<usize>();
        said.patterns
            .sort_by(|a, b| fixed(&b.0).cmp(&fixed(&a.0)).then(a.1.cmp(b.1)));
        said
    })
}

/// The language of this render, with its lookups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tr(pub Locale);

impl Tr {
    /// The text of `key`.
    pub fn t(self, key: &'static str) -> &'static str {
        text(self.0, key)
    }

    /// The text of `key` with each `{name}` replaced by its value.
    pub fn f(self, key: &'static str, values: &[(&str, &str)]) -> String {
        let mut out = self.t(key).to_string();
        for (name, value) in values {
            out = out.replace(&format!("{{{name}}}"), value);
        }
        out
    }

    /// A whole number with the locale's digit grouping (both use `1,234`).
    pub fn number(self, n: i64) -> String {
        let digits = crate::api::grouped(n.unsigned_abs());
        if n < 0 {
            format!("-{digits}")
        } else {
            digits
        }
    }

    pub fn locale(self) -> Locale {
        self.0
    }

    /// A sentence written in English elsewhere (a rule's refusal, also kept as written in
    /// the audit trail) in this language, when the catalogue knows it: matched by its
    /// English text, as gettext matches messages. A `said.*` text with `{name}` holes
    /// matches sentences that fill them (`the {what} is longer than {max} characters`); the
    /// values are translated in turn (a wire word such as a `role` by [`Tr::word`], anything
    /// else as a sentence). Anything else stays as written.
    pub fn sentence(self, english: &str) -> String {
        if self.0 == Locale::En {
            return english.to_string();
        }
        let said = said();
        if let Some(key) = said.exact.get(english) {
            return self.t(key).to_string();
        }
        for (pattern, key) in &said.patterns {
            if let Some(values) = pattern.matches(english) {
                let values: Vec<(&str, String)> = values
                    .into_iter()
                    .map(|(name, v)| match name {
                        "role" | "status" | "risk" | "layer" => (name, self.word(name, v).to_string()),
                        _ => (name, self.sentence(v)),
                    })
                    .collect();
                let values: Vec<(&str, &str)> = values.iter().map(|(n, v)| (*n, v.as_str())).collect();
                return self.f(key, &values);
            }
        }
        english.to_string()
    }

    /// Who decided, as people of the locale read it: [`crate::api::who`] with the
    /// locale's "and" between several names.
    pub fn who(self, by: &str) -> String {
        crate::api::who_joined(by, self.t("who.and"))
    }

    /// A wire value of some `kind` (`status`, `risk`, `layer`) as people read it: the
    /// catalogue's `<kind>.<value>`, or the value itself when there is none (a status a
    /// newer server sends, say).
    pub fn word<'a>(self, kind: &str, value: &'a str) -> &'a str {
        let key = format!("{kind}.{value}");
        catalogue(self.0)
            .get(&key)
            .or_else(|| catalogue(Locale::En).get(&key))
            .map_or(value, String::as_str)
    }

    /// A moment (ms since the epoch) as people of the locale write it, in UTC:
    /// "2026-12-02 09:30:05 UTC", "2026年12月2日 09:30:05 UTC".
    pub fn time(self, ms: i64) -> String {
        match self.0 {
            Locale::En => crate::components::clock::utc(ms),
            Locale::ZhCn => {
                let (y, mo, d, h, mi, s) = crate::components::clock::civil(ms);
                format!("{y}年{mo}月{d}日 {h:02}:{mi:02}:{s:02} UTC")
            }
        }
    }

    /// A duration: "42 s", "5 min", "3 h", "2 d" / "42 秒", "5 分钟", "3 小时", "2 天".
    pub fn span(self, ms: i64) -> String {
        let s = ms.max(0) / 1000;
        let (n, unit) = match s {
            0..=59 => (s, "unit.s"),
            60..=3599 => (s / 60, "unit.min"),
            3600..=86_399 => (s / 3600, "unit.h"),
            _ => (s / 86_400, "unit.d"),
        };
        self.f(unit, &[("n", &n.to_string())])
    }
}

/// The language of the page being rendered (the session carries it into the browser).
pub fn use_tr() -> Tr {
    Tr(crate::components::shell::use_session().locale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_language_picks_the_best_offered_language() {
        assert_eq!(Locale::negotiate("zh-CN,zh;q=0.9,en;q=0.8"), Some(Locale::ZhCn));
        assert_eq!(Locale::negotiate("en-US,en;q=0.9"), Some(Locale::En));
        assert_eq!(Locale::negotiate("fr-FR, zh;q=0.5, en;q=0.7"), Some(Locale::En));
        assert_eq!(Locale::negotiate("fr, de;q=0.5"), None);
        assert_eq!(Locale::negotiate("zh-Hans;q=0, en;q=0.1"), Some(Locale::En));
        assert_eq!(Locale::negotiate(""), None);
        assert_eq!(Locale::from_tag("ZH_cn"), Some(Locale::ZhCn));
    }

    #[test]
    fn catalogues_parse_and_hold_the_same_keys() {
        for text in SOURCES.iter().flat_map(|l| l.iter()) {
            serde_json::from_str::<HashMap<String, String>>(text).expect("every catalogue file parses");
        }
        let (en, zh) = (catalogue(Locale::En), catalogue(Locale::ZhCn));
        let mut missing_zh: Vec<_> = en.keys().filter(|k| !zh.contains_key(*k)).collect();
        let mut missing_en: Vec<_> = zh.keys().filter(|k| !en.contains_key(*k)).collect();
        missing_zh.sort();
        missing_en.sort();
        assert!(missing_zh.is_empty(), "keys missing from zh-CN.json: {missing_zh:?}");
        assert!(missing_en.is_empty(), "keys missing from en.json: {missing_en:?}");
        // Placeholders must survive translation.
        let holes = |s: &str| {
            let mut v: Vec<String> = s
                .split('{')
                .skip(1)
                .filter_map(|p| p.split_once('}').map(|(n, _)| n.to_string()))
                .collect();
            v.sort();
            v
        };
        for (k, v) in en {
            assert_eq!(holes(v), holes(&zh[k]), "placeholders of {k} differ");
            assert!(!zh[k].trim().is_empty(), "{k} is empty in zh-CN.json");
        }
    }

    /// Every key the code looks up (`.t("…")`, `.f("…"`) is in the catalogues.
    #[test]
    fn every_key_used_in_the_code_is_in_the_catalogue() {
        let en = catalogue(Locale::En);
        // The app, and the server's sentences written into answers.
        let app = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut missing = Vec::new();
        let mut used = 0;
        let mut stack = vec![app.join("src"), app.join("../server/src")];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                // This file names the patterns themselves.
                if path.extension().is_none_or(|e| e != "rs") || path.ends_with("i18n.rs") {
                    continue;
                }
                let src = std::fs::read_to_string(&path).unwrap();
                for key in keys_in(&src) {
                    used += 1;
                    if !en.contains_key(&key) {
                        missing.push(format!("{}: {key}", path.display()));
                    }
                }
            }
        }
        assert!(
            used > 50,
            "the scan found only {used} lookups: is it still reading the code?"
        );
        assert!(
            missing.is_empty(),
            "keys missing from the catalogue:\n{}",
            missing.join("\n")
        );
    }

    /// The string literals passed to `.t(`, `.f(` and `tr_key(` in `src` (the literal may
    /// start on the next line, as rustfmt puts it).
    fn keys_in(src: &str) -> Vec<String> {
        let mut keys = Vec::new();
        for pat in [".t(", ".f(", "tr_key("] {
            let mut rest = src;
            while let Some(i) = rest.find(pat) {
                rest = &rest[i + pat.len()..];
                let Some(lit) = rest.trim_start().strip_prefix('"') else {
                    continue;
                };
                if let Some(end) = lit.find('"') {
                    keys.push(lit[..end].to_string());
                }
            }
        }
        keys
    }

    #[test]
    fn the_scan_sees_a_missing_key() {
        let en = catalogue(Locale::En);
        let keys = keys_in("let x = tr.t(\"no.such.key\"); tr.f(\n    \"nav.queue\", &[]); x.t(y);");
        assert_eq!(keys, ["no.such.key", "nav.queue"]);
        assert!(!en.contains_key("no.such.key"));
    }

    #[cfg(not(feature = "hydrate"))]
    #[test]
    fn sentences_written_with_values_are_translated_and_so_are_their_values() {
        let zh = Tr(Locale::ZhCn);
        assert_eq!(
            zh.sentence("the comment is longer than 2000 characters"),
            "备注超过了 2000 个字符"
        );
        assert_eq!(
            zh.sentence("your role (auditor) may not revoke grants"),
            "你的角色（审计员）不能撤销批量授权"
        );
        // A hole takes whatever fills it, fixed text included, up to the next fixed text.
        assert_eq!(
            zh.sentence("the URL is refused: not a valid absolute URL: relative URL without a base"),
            "该 URL 被拒绝：not a valid absolute URL: relative URL without a base"
        );
        assert_eq!(
            zh.sentence("this override was already reviewed by 张三"),
            "该紧急放行已由 张三 复核"
        );
        // A value that is itself a known sentence is translated too.
        assert_eq!(
            zh.sentence("hook did not take the test notification: the receiver answered 502 Bad Gateway"),
            "hook 未接收测试通知：接收方返回了 502 Bad Gateway"
        );
        // The exact sentence wins over a pattern it also fits.
        assert_eq!(
            zh.sentence("the description is longer than 200 characters"),
            zh.t("said.agent_description_long")
        );
        // Near misses stay as written: a hole must hold something, the ends must match.
        for s in [
            "the  is longer than 20 characters",
            "the comment is longer than 20 characters!",
            "xthe comment is longer than 20 characters",
            "your role () may not revoke grants",
        ] {
            assert_eq!(zh.sentence(s), s);
        }
        assert_eq!(
            Tr(Locale::En).sentence("your role (auditor) may not revoke grants"),
            "your role (auditor) may not revoke grants"
        );
    }

    #[test]
    fn patterns_split_at_holes_and_refuse_holes_side_by_side() {
        assert!(Pattern::of("no holes").is_none());
        assert!(Pattern::of("{a}{b} side by side").is_none());
        let p = Pattern::of("{a} then {b}").unwrap();
        assert_eq!(p.matches("x then y then z"), Some(vec![("a", "x"), ("b", "y then z")]));
        assert_eq!(p.matches(" then y"), None);
        assert_eq!(p.matches("张 then 三"), Some(vec![("a", "张"), ("b", "三")]));
    }

    #[test]
    fn several_deciders_are_joined_in_the_readers_language() {
        assert_eq!(Tr(Locale::En).who("user:alice, user:bob"), "alice and bob");
        assert_eq!(Tr(Locale::ZhCn).who("user:alice, user:bob"), "alice 和 bob");
        assert_eq!(Tr(Locale::ZhCn).who("system"), "system");
    }

    #[test]
    fn values_fill_placeholders_and_numbers_group() {
        let tr = Tr(Locale::En);
        assert_eq!(tr.number(1234567), "1,234,567");
        assert_eq!(tr.number(-12), "-12");
        assert_eq!(tr.number(999), "999");
        assert_eq!(text(Locale::ZhCn, "no.such.key"), "no.such.key");
        let ms = 1_764_667_805_000; // 2025-12-02 09:30:05 UTC
        assert_eq!(tr.time(ms), "2025-12-02 09:30:05 UTC");
        assert_eq!(Tr(Locale::ZhCn).time(ms), "2025年12月2日 09:30:05 UTC");
        assert_eq!(tr.span(300_000), "5 min");
        let said = "the last active administrator cannot be disabled";
        assert_eq!(Tr(Locale::ZhCn).sentence(said), "最后一位启用中的管理员不能被停用");
        assert_eq!(tr.sentence(said), said);
        assert_eq!(Tr(Locale::ZhCn).sentence("something new"), "something new");
        assert_eq!(Tr(Locale::ZhCn).span(7_200_000), "2 小时");
    }
}
