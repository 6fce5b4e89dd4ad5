//! Property tests: exact tool names and the path and URL guards.

use policy::config::{FenceConfig, UrlGuardConfig};
use policy::guards::path::Fence;
use policy::guards::url::{denied_ip, UrlGuard};
use policy::name::{check, is_name_char};
use policy::PureHost;
use proptest::prelude::*;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::Path;

fn fence(roots: &[&str]) -> Fence {
    Fence::new(
        "t",
        &FenceConfig {
            roots: roots.iter().map(|s| s.to_string()).collect(),
            relative_base: Some(roots[0].to_string()),
            allow_root: true,
            ascii_only: false,
            allow_wildcards: false,
            resolve_symlinks: true,
        },
    )
    .unwrap()
}

fn web() -> UrlGuard {
    UrlGuard::new(
        "web",
        &UrlGuardConfig {
            schemes: vec!["http".into(), "https".into()],
            deny_hosts: vec![],
            allow_hosts: vec![],
            ports: vec![],
            resolve: false,
        },
    )
    .unwrap()
}

/// Path segments an attacker might use.
fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-z0-9_]{1,8}",
        2 => Just("..".to_string()),
        1 => Just(".".to_string()),
        1 => Just("".to_string()),
        1 => Just("...".to_string()),
        1 => Just("%2e%2e".to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// An accepted name is exactly the input and holds only allowlist characters.
    #[test]
    fn accepted_names_are_the_input_unchanged(raw in "\\PC{0,40}") {
        if let Ok(n) = check(&raw) {
            prop_assert!(n.chars().all(is_name_char), "{n:?}");
            prop_assert_eq!(n, raw.as_str());
        }
    }

    /// Any change of case, padding, or inserted character that is not a name character
    /// makes a name unmatched: nothing is folded into an allowlisted name.
    #[test]
    fn nothing_is_folded(
        name in "[a-z][a-z0-9_]{0,20}",
        pad in "[ \t\r\n]{0,3}",
        upper in any::<bool>(),
        junk in any::<char>().prop_filter("not a name char", |c| !is_name_char(*c)),
        at in 0usize..20,
    ) {
        if upper {
            prop_assert!(check(&name.to_ascii_uppercase()).is_err());
        }
        if !pad.is_empty() {
            let (before, after) = (format!("{pad}{name}"), format!("{name}{pad}"));
            prop_assert!(check(&before).is_err());
            prop_assert!(check(&after).is_err());
        }
        let at = at.min(name.len());
        let mut spoofed = name.clone();
        spoofed.insert(at, junk);
        prop_assert!(check(&spoofed).is_err(), "{spoofed:?} was accepted");
    }

    /// Whatever a path is made of, an accepted path is inside a root after normalisation.
    #[test]
    fn accepted_paths_stay_inside_the_fence(
        absolute in any::<bool>(),
        segs in prop::collection::vec(segment(), 0..8),
    ) {
        let f = fence(&["/srv/ws"]);
        let body = segs.join("/");
        let raw = if absolute { format!("/{body}") } else { body };
        if let Ok(p) = f.check(&raw, &PureHost) {
            prop_assert!(p.starts_with("/srv/ws"), "{raw:?} -> {p:?}");
            prop_assert!(!p.components().any(|c| matches!(c, std::path::Component::ParentDir)));
        }
    }

    /// Relative paths of plain names are always inside; one `..` too many is always out.
    #[test]
    fn relative_depth_decides(names in prop::collection::vec("[a-z]{1,6}", 0..6), extra in 1usize..4) {
        let f = fence(&["/srv/ws"]);
        let inside = if names.is_empty() { ".".to_string() } else { names.join("/") };
        prop_assert!(f.check(&inside, &PureHost).is_ok(), "{inside:?}");
        let ups = vec![".."; names.len() + extra].join("/");
        let escape = format!("{inside}/{ups}/etc/passwd");
        prop_assert!(f.check(&escape, &PureHost).is_err(), "{escape:?}");
    }

    /// Path normalisation never yields a path outside what lexical resolution gives.
    #[test]
    fn normalise_has_no_parent_dirs(segs in prop::collection::vec(segment(), 0..10)) {
        let p = format!("/{}", segs.join("/"));
        let n = policy::guards::path::normalize(Path::new(&p));
        prop_assert!(n.is_absolute());
        prop_assert!(!n.components().any(|c| matches!(c, std::path::Component::ParentDir | std::path::Component::CurDir)), "{n:?}");
    }

    /// Every IPv4 address the guard denies is denied in every spelling a URL parser accepts.
    #[test]
    fn ipv4_spellings_agree(a in any::<u32>()) {
        let ip = Ipv4Addr::from(a);
        let g = web();
        let dotted = g.check(&format!("http://{ip}/"), &PureHost).is_ok();
        prop_assert_eq!(dotted, denied_ip(IpAddr::V4(ip)).is_none());
        for spelled in [
            format!("http://{a}/"),
            format!("http://0x{a:x}/"),
            format!("http://0{a:o}/"),
            format!("http://[::ffff:{ip}]/"),
            format!("http://{}.{}.{}/", a >> 24, (a >> 16) & 0xff, a & 0xffff),
        ] {
            prop_assert_eq!(g.check(&spelled, &PureHost).is_ok(), dotted, "{}", spelled);
        }
    }

    /// IPv6 forms that embed an IPv4 address are judged by the embedded address.
    #[test]
    fn embedded_ipv4_is_judged(a in any::<u32>()) {
        let v4 = Ipv4Addr::from(a);
        let g = web();
        let want = g.check(&format!("http://{v4}/"), &PureHost).is_ok();
        let mapped = Ipv6Addr::from(((0xffffu128) << 32) | a as u128);
        let nat64 = Ipv6Addr::from((0x0064_ff9b_u128 << 96) | a as u128);
        prop_assert_eq!(g.check(&format!("http://[{mapped}]/"), &PureHost).is_ok(), want);
        // NAT64 of a private address must never pass.
        if !want {
            let u = format!("http://[{nat64}]/");
            prop_assert!(g.check(&u, &PureHost).is_err(), "{}", u);
        }
    }

    /// The guard never panics on arbitrary input and refuses anything with blanks.
    #[test]
    fn url_guard_total(raw in "\\PC{0,80}", blank in "[ \t\n]") {
        let g = web();
        let _ = g.check(&raw, &PureHost);
        let with_blank = format!("https://exa{blank}mple.com/");
        prop_assert!(g.check(&with_blank, &PureHost).is_err());
    }
}
