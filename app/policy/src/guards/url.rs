//! URL / SSRF guard.
//!
//! The URL is parsed by the WHATWG parser (`url` crate), which turns `2130706433`,
//! `0x7f.1`, `0177.0.0.1`, `127.1` and percent-encoded or trailing-dot hosts into the
//! IPv4 address they mean, so the check runs on the address, never on the spelling.
//! IPv6 addresses that embed an IPv4 address (mapped, compatible, NAT64, 6to4) are
//! judged by that address. Names are matched after folding a trailing dot.
//!
//! What this guard cannot do alone: stop DNS rebinding. With `resolve = true` the
//! decision carries the addresses it judged; the executor must connect to those
//! (pin them), not resolve the name again.

use crate::config::UrlGuardConfig;
use crate::host::Host;
use ipnet::{Ipv4Net, Ipv6Net};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::LazyLock;
use url::{Host as UrlHost, Url};

pub const MAX_URL: usize = 8192;

/// IPv4 ranges that are never a public destination (IANA special-purpose registry,
/// RFC 6890, plus CGNAT RFC 6598 and the multicast / reserved blocks).
static DENIED_V4: LazyLock<Vec<(Ipv4Net, &'static str)>> = LazyLock::new(|| {
    [
        ("0.0.0.0/8", "unspecified (this network)"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "carrier-grade NAT (shared)"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local (cloud metadata)"),
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "IETF protocol assignments"),
        ("192.0.2.0/24", "documentation"),
        ("192.31.196.0/24", "AS112"),
        ("192.52.193.0/24", "AMT"),
        ("192.88.99.0/24", "6to4 relay anycast"),
        ("192.168.0.0/16", "private"),
        ("192.175.48.0/24", "AS112"),
        ("198.18.0.0/15", "benchmarking"),
        ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved / broadcast"),
    ]
    .into_iter()
    .map(|(n, why)| (n.parse().expect("static range"), why))
    .collect()
});

static DENIED_V6: LazyLock<Vec<(Ipv6Net, &'static str)>> = LazyLock::new(|| {
    [
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("64:ff9b:1::/48", "local-use NAT64"),
        ("100::/64", "discard-only"),
        ("2001::/23", "IETF protocol assignments (incl. Teredo)"),
        ("2001:db8::/32", "documentation"),
        ("3fff::/20", "documentation"),
        ("5f00::/16", "segment routing"),
        ("fc00::/7", "unique local (private)"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local"),
        ("ff00::/8", "multicast"),
    ]
    .into_iter()
    .map(|(n, why)| (n.parse().expect("static range"), why))
    .collect()
});

/// Names that always mean this machine or a cloud metadata service.
const BUILTIN_DENIED_HOSTS: &[&str] = &[
    "localhost",
    "*.localhost",
    "localhost.localdomain",
    "ip6-localhost",
    "ip6-loopback",
    "metadata",
    "metadata.google.internal",
    "metadata.goog",
    "instance-data",
    "instance-data.ec2.internal",
];

/// Why an address is not a public destination, or `None` when it is.
pub fn denied_ip(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => denied_v4(v4),
        IpAddr::V6(v6) => denied_v6(v6),
    }
}

fn denied_v4(ip: Ipv4Addr) -> Option<&'static str> {
    DENIED_V4.iter().find(|(n, _)| n.contains(&ip)).map(|(_, why)| *why)
}

fn denied_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = embedded_v4(ip) {
        return denied_v4(v4);
    }
    DENIED_V6.iter().find(|(n, _)| n.contains(&ip)).map(|(_, why)| *why)
}

/// The IPv4 address inside IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96),
/// NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses.
pub fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let o = ip.octets();
    let tail = Ipv4Addr::new(o[12], o[13], o[14], o[15]);
    if s[..5] == [0, 0, 0, 0, 0] && (s[5] == 0xffff || (s[5] == 0 && (s[6] != 0 || s[7] > 1))) {
        return Some(tail);
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(tail);
    }
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new(o[2], o[3], o[4], o[5]));
    }
    None
}

#[derive(Debug, Clone)]
enum HostPattern {
    Exact(String),
    Suffix(String), // ".example.com"
}

impl HostPattern {
    fn parse(s: &str) -> Result<HostPattern, String> {
        let s = s.trim().trim_end_matches('.').to_ascii_lowercase();
        if s.is_empty() {
            return Err("empty host pattern".into());
        }
        if let Some(rest) = s.strip_prefix("*.") {
            if rest.is_empty() || rest.contains('*') {
                return Err(format!("bad host pattern {s:?}"));
            }
            Ok(HostPattern::Suffix(format!(".{rest}")))
        } else if s.contains('*') {
            Err(format!("bad host pattern {s:?}: only a leading `*.` is allowed"))
        } else {
            Ok(HostPattern::Exact(s))
        }
    }
    fn matches(&self, host: &str) -> bool {
        match self {
            HostPattern::Exact(e) => host == e,
            HostPattern::Suffix(suf) => host.ends_with(suf.as_str()),
        }
    }
}

#[derive(Debug, Clone)]
pub struct UrlGuard {
    pub name: String,
    schemes: Vec<String>,
    deny_hosts: Vec<HostPattern>,
    allow_hosts: Vec<HostPattern>,
    ports: Vec<u16>,
    resolve: bool,
}

/// A URL that passed, with the addresses the executor must use when it resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedUrl {
    pub host: String,
    pub pinned: Vec<IpAddr>,
}

impl UrlGuard {
    pub fn new(name: &str, c: &UrlGuardConfig) -> Result<UrlGuard, String> {
        let mut schemes = Vec::new();
        for s in &c.schemes {
            let s = s.to_ascii_lowercase();
            if s != "http" && s != "https" {
                return Err(format!("scheme {s:?} is not supported; use http and/or https"));
            }
            schemes.push(s);
        }
        if schemes.is_empty() {
            return Err("schemes must not be empty".into());
        }
        let mut deny_hosts = Vec::new();
        for h in BUILTIN_DENIED_HOSTS
            .iter()
            .map(|s| s.to_string())
            .chain(c.deny_hosts.iter().cloned())
        {
            deny_hosts.push(HostPattern::parse(&h)?);
        }
        let allow_hosts = c
            .allow_hosts
            .iter()
            .map(|h| HostPattern::parse(h))
            .collect::<Result<_, _>>()?;
        Ok(UrlGuard {
            name: name.to_string(),
            schemes,
            deny_hosts,
            allow_hosts,
            ports: c.ports.clone(),
            resolve: c.resolve,
        })
    }

    pub fn check(&self, raw: &str, host: &dyn Host) -> Result<CheckedUrl, String> {
        if raw.len() > MAX_URL {
            return Err(format!("URL longer than {MAX_URL} bytes"));
        }
        // The WHATWG parser silently drops tabs/newlines and trims spaces; refuse them instead,
        // so what a reviewer reads is exactly what is fetched.
        if let Some(c) = raw.chars().find(|c| c.is_control() || c.is_whitespace()) {
            return Err(format!(
                "URL contains whitespace or control character U+{:04X}",
                c as u32
            ));
        }
        let url = Url::parse(raw).map_err(|e| format!("not a valid absolute URL: {e}"))?;
        if !self.schemes.iter().any(|s| s == url.scheme()) {
            return Err(format!(
                "scheme {:?} is not allowed (allowed: {})",
                url.scheme(),
                self.schemes.join(", ")
            ));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err("credentials in URLs are not allowed".into());
        }
        let port = url.port_or_known_default().unwrap_or(0);
        if !self.ports.is_empty() && !self.ports.contains(&port) {
            return Err(format!("port {port} is not allowed"));
        }
        match url.host() {
            None => Err("URL has no host".into()),
            Some(UrlHost::Ipv4(ip)) => self.check_ip_host(IpAddr::V4(ip)),
            Some(UrlHost::Ipv6(ip)) => self.check_ip_host(IpAddr::V6(ip)),
            Some(UrlHost::Domain(d)) => {
                let name = d.trim_end_matches('.').to_ascii_lowercase();
                if name.is_empty() {
                    return Err("URL has an empty host".into());
                }
                if let Some(p) = self.deny_hosts.iter().find(|p| p.matches(&name)) {
                    let pat = match p {
                        HostPattern::Exact(e) => e.clone(),
                        HostPattern::Suffix(s) => format!("*{s}"),
                    };
                    return Err(format!("host {name} is denied ({pat})"));
                }
                if !self.allow_hosts.is_empty() && !self.allow_hosts.iter().any(|p| p.matches(&name)) {
                    return Err(format!("host {name} is not on the allowed list of {}", self.name));
                }
                let mut pinned = Vec::new();
                if self.resolve {
                    let addrs = host
                        .resolve_host(&name, port)
                        .ok_or_else(|| format!("host {name} does not resolve"))?;
                    for ip in &addrs {
                        if let Some(why) = denied_ip(*ip) {
                            return Err(format!("host {name} resolves to {ip}, a {why} address"));
                        }
                    }
                    pinned = addrs;
                }
                Ok(CheckedUrl { host: name, pinned })
            }
        }
    }

    fn check_ip_host(&self, ip: IpAddr) -> Result<CheckedUrl, String> {
        if let Some(why) = denied_ip(ip) {
            return Err(format!("address {ip} is a {why} address"));
        }
        if !self.allow_hosts.is_empty() {
            return Err(format!("address {ip} is not on the allowed list of {}", self.name));
        }
        Ok(CheckedUrl {
            host: ip.to_string(),
            pinned: vec![ip],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::PureHost;

    fn guard() -> UrlGuard {
        UrlGuard::new(
            "web",
            &UrlGuardConfig {
                schemes: vec!["http".into(), "https".into()],
                deny_hosts: vec!["*.internal".into(), "*.corp.example".into()],
                allow_hosts: vec![],
                ports: vec![],
                resolve: false,
            },
        )
        .unwrap()
    }

    #[test]
    fn public_urls_pass() {
        let g = guard();
        for u in [
            "https://example.com/",
            "http://example.com:8080/path?q=1#frag",
            "https://EXAMPLE.com./x",
            "https://93.184.215.14/",
            "https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/",
            "https://xn--bcher-kva.example/",
            "https://8.8.8.8/dns",
            "https://[::ffff:8.8.8.8]/",
            "https://[64:ff9b::808:808]/",
            "https://internal.example.com/",
        ] {
            assert!(g.check(u, &PureHost).is_ok(), "{u}: {:?}", g.check(u, &PureHost));
        }
    }

    #[test]
    fn ssrf_encodings_of_internal_addresses_are_denied() {
        let g = guard();
        for u in [
            "http://127.0.0.1/",
            "http://127.1/",
            "http://2130706433/",
            "http://0x7f000001/",
            "http://0x7f.0.0.1/",
            "http://0177.0.0.1/",
            "http://017700000001/",
            "http://127.000.000.001/",
            "http://%31%32%37.0.0.1/",
            "http://127.0.0.1.:80/",
            "http://0/",
            "http://0.0.0.0:8000/",
            "http://[::]/",
            "http://[::1]/",
            "http://[0:0:0:0:0:0:0:1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:7f00:1]/",
            "http://[::127.0.0.1]/",
            "http://[64:ff9b::7f00:1]/",
            "http://[64:ff9b::a9fe:a9fe]/",
            "http://[2002:7f00:1::]/",
            "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
            "http://10.0.0.5/",
            "http://172.16.3.4/",
            "http://172.31.255.255/",
            "http://192.168.1.1/",
            "http://169.254.169.254/latest/meta-data/",
            "http://[fd00:ec2::254]/",
            "http://100.100.100.200/",
            "http://100.64.0.1/",
            "http://[fe80::1]/",
            "http://[fc00::1]/",
            "http://224.0.0.1/",
            "http://255.255.255.255/",
            "http://240.0.0.1/",
            "http://198.18.0.1/",
            "http://localhost/",
            "http://LOCALHOST./",
            "http://app.localhost/",
            "http://metadata.google.internal/computeMetadata/v1/",
            "http://metadata/",
            "http://db.internal/",
            "http://wiki.corp.example/",
        ] {
            assert!(g.check(u, &PureHost).is_err(), "{u} passed");
        }
    }

    #[test]
    fn schemes_credentials_and_malformed_urls_are_denied_with_reasons() {
        let g = guard();
        for (u, needle) in [
            ("file:///etc/passwd", "scheme"),
            ("gopher://example.com/", "scheme"),
            ("ftp://example.com/", "scheme"),
            ("javascript:alert(1)", "scheme"),
            ("data:text/plain,hi", "scheme"),
            ("https://user:pass@example.com/", "credentials"),
            ("https://user@example.com/", "credentials"),
            ("https://example.com@127.0.0.1/", "credentials"),
            ("//example.com/", "valid absolute URL"),
            ("/relative", "valid absolute URL"),
            ("https://exa mple.com/", "whitespace"),
            ("https://example.com/\n", "whitespace"),
            ("\thttp://127.0.0.1", "whitespace"),
            ("http://[::1", "valid absolute URL"),
            ("http://", "valid absolute URL"),
        ] {
            let e = g.check(u, &PureHost).unwrap_err();
            assert!(e.contains(needle), "{u}: {e}");
        }
    }

    #[test]
    fn allow_lists_and_ports_restrict_further() {
        let g = UrlGuard::new(
            "api",
            &UrlGuardConfig {
                schemes: vec!["https".into()],
                deny_hosts: vec![],
                allow_hosts: vec!["api.example.com".into(), "*.cdn.example".into()],
                ports: vec![443],
                resolve: false,
            },
        )
        .unwrap();
        assert!(g.check("https://api.example.com/v1", &PureHost).is_ok());
        assert!(g.check("https://img.cdn.example/x.png", &PureHost).is_ok());
        assert!(g.check("https://cdn.example/x.png", &PureHost).is_err());
        assert!(g.check("https://evil.com/", &PureHost).is_err());
        assert!(g
            .check("https://api.example.com:8443/", &PureHost)
            .unwrap_err()
            .contains("port"));
        assert!(g
            .check("http://api.example.com/", &PureHost)
            .unwrap_err()
            .contains("scheme"));
        assert!(g
            .check("https://8.8.8.8/", &PureHost)
            .unwrap_err()
            .contains("allowed list"));
    }

    struct FakeDns(Vec<IpAddr>);
    impl Host for FakeDns {
        fn resolve_path(&self, _: &std::path::Path) -> Option<std::path::PathBuf> {
            None
        }
        fn tree_stats(&self, _: &std::path::Path, _: u64) -> Option<crate::host::TreeStats> {
            None
        }
        fn resolve_host(&self, _: &str, _: u16) -> Option<Vec<IpAddr>> {
            (!self.0.is_empty()).then(|| self.0.clone())
        }
    }

    #[test]
    fn resolution_judges_every_address_and_pins_them() {
        let mut c = UrlGuardConfig {
            schemes: vec!["https".into()],
            deny_hosts: vec![],
            allow_hosts: vec![],
            ports: vec![],
            resolve: true,
        };
        let g = UrlGuard::new("r", &c).unwrap();
        let public: IpAddr = "93.184.215.14".parse().unwrap();
        let private: IpAddr = "10.1.2.3".parse().unwrap();
        let ok = g.check("https://example.com/", &FakeDns(vec![public])).unwrap();
        assert_eq!(ok.pinned, vec![public]);
        let e = g
            .check("https://rebind.example/", &FakeDns(vec![public, private]))
            .unwrap_err();
        assert!(e.contains("10.1.2.3"), "{e}");
        assert!(g
            .check("https://nx.example/", &FakeDns(vec![]))
            .unwrap_err()
            .contains("does not resolve"));
        c.resolve = false;
        assert!(UrlGuard::new("r", &c)
            .unwrap()
            .check("https://nx.example/", &FakeDns(vec![]))
            .is_ok());
    }

    #[test]
    fn embedded_v4_extraction() {
        let p = |s: &str| s.parse::<Ipv6Addr>().unwrap();
        assert_eq!(embedded_v4(p("::ffff:1.2.3.4")), Some(Ipv4Addr::new(1, 2, 3, 4)));
        assert_eq!(embedded_v4(p("::1.2.3.4")), Some(Ipv4Addr::new(1, 2, 3, 4)));
        assert_eq!(embedded_v4(p("64:ff9b::1.2.3.4")), Some(Ipv4Addr::new(1, 2, 3, 4)));
        assert_eq!(embedded_v4(p("2002:0102:0304::1")), Some(Ipv4Addr::new(1, 2, 3, 4)));
        assert_eq!(embedded_v4(p("::1")), None);
        assert_eq!(embedded_v4(p("2606:4700::1")), None);
    }

    #[test]
    fn bad_guard_configuration_is_refused() {
        let c = |schemes: Vec<&str>, deny: Vec<&str>| UrlGuardConfig {
            schemes: schemes.into_iter().map(String::from).collect(),
            deny_hosts: deny.into_iter().map(String::from).collect(),
            allow_hosts: vec![],
            ports: vec![],
            resolve: false,
        };
        assert!(UrlGuard::new("x", &c(vec!["ftp"], vec![])).is_err());
        assert!(UrlGuard::new("x", &c(vec![], vec![])).is_err());
        assert!(UrlGuard::new("x", &c(vec!["https"], vec!["a.*.com"])).is_err());
    }
}
