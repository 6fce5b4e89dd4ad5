//! Which role may open which page: one table used by the server (redirects, 403) and by
//! the navigation, so the two never disagree.

use crate::api::{Permission, Role};
use crate::i18n::tr_key;

/// A page of the dashboard and the permission it needs ([`Role::may`] decides).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    pub path: &'static str,
    /// The catalogue key of its name in the navigation.
    pub label: &'static str,
    pub needs: Permission,
}

impl Page {
    pub fn allows(&self, role: Role) -> bool {
        role.may(self.needs)
    }
}

/// Pages in navigation order.
pub const PAGES: &[Page] = &[
    Page {
        path: "/queue",
        label: tr_key("nav.queue"),
        needs: Permission::ReadCalls,
    },
    Page {
        path: "/grants",
        label: tr_key("nav.grants"),
        needs: Permission::ReadCalls,
    },
    Page {
        path: "/oncall",
        label: tr_key("nav.oncall"),
        needs: Permission::ReadCalls,
    },
    Page {
        path: "/audit",
        label: tr_key("nav.audit"),
        needs: Permission::ReadAudit,
    },
    Page {
        path: "/stats",
        label: tr_key("nav.stats"),
        needs: Permission::ReadStats,
    },
    Page {
        path: "/admin",
        label: tr_key("nav.admin"),
        needs: Permission::ManageUsers,
    },
];

/// Paths anyone may open without signing in.
pub const PUBLIC: &[&str] = &["/login"];

/// The page at `path`, if it is a dashboard page. A call's review page (`/calls/ID`) and
/// a notification's confirm page (`/confirm?t=…`) belong to the queue, a timeline
/// (`/audit/sessions/ID`, `/audit/traces/ID`) to the audit page, the policy pages
/// (`/admin/policy…`) to the admin page: the same people may open them.
pub fn page(path: &str) -> Option<&'static Page> {
    let path = if path.starts_with("/calls/") || path == "/confirm" {
        "/queue"
    } else if path.starts_with("/audit/") {
        "/audit"
    } else if path.starts_with("/admin/") {
        "/admin"
    } else {
        path
    };
    PAGES.iter().find(|p| p.path == path)
}

/// The pages `role` may open.
pub fn pages_for(role: Role) -> impl Iterator<Item = &'static Page> {
    PAGES.iter().filter(move |p| p.allows(role))
}

/// Whether this person may open the page: their role's right, or the audit pages when the
/// configuration opens the trail to their role (`reads_audit`, from the server).
pub fn opens(page: &Page, role: Role, reads_audit: bool) -> bool {
    page.allows(role) || (page.path == "/audit" && reads_audit)
}

/// Where a user lands after signing in.
pub fn home_for(role: Role) -> &'static str {
    pages_for(role).next().map_or("/", |p| p.path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_role_has_a_home_page() {
        for r in Role::ALL {
            assert_ne!(home_for(r), "/", "{r:?}");
        }
    }

    #[test]
    fn only_admins_see_admin_and_only_auditors_and_admins_see_audit() {
        use Role::*;
        let who_may = |path| {
            Role::ALL
                .into_iter()
                .filter(|r| page(path).unwrap().allows(*r))
                .collect::<Vec<_>>()
        };
        assert_eq!(who_may("/admin"), [Admin]);
        assert_eq!(who_may("/admin/policy"), [Admin]);
        assert_eq!(who_may("/admin/policy/replay"), [Admin]);
        assert_eq!(who_may("/audit"), [Admin, Auditor]);
        assert_eq!(who_may("/calls/tc_1"), Role::ALL);
        assert_eq!(
            who_may("/confirm"),
            Role::ALL,
            "the confirm page asks the decision's own rights"
        );
        assert_eq!(who_may("/oncall"), Role::ALL, "everyone may read overrides");
        assert_eq!(
            pages_for(Role::Reviewer)
                .map(|p| crate::i18n::text(crate::i18n::Locale::En, p.label))
                .collect::<Vec<_>>(),
            ["Queue", "Grants", "On-call", "Stats"]
        );
    }
}
