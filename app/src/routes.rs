//! Which role may open which page: one table used by the server (redirects, 403) and by
//! the navigation, so the two never disagree.

use crate::api::Role;

/// A page of the dashboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    pub path: &'static str,
    pub label: &'static str,
    pub roles: &'static [Role],
}

use Role::*;

/// Pages in navigation order.
pub const PAGES: &[Page] = &[
    Page {
        path: "/queue",
        label: "Queue",
        roles: &[Admin, Reviewer, Oncall, Auditor],
    },
    Page {
        path: "/grants",
        label: "Grants",
        roles: &[Admin, Reviewer, Oncall, Auditor],
    },
    Page {
        path: "/audit",
        label: "Audit",
        roles: &[Admin, Auditor],
    },
    Page {
        path: "/stats",
        label: "Stats",
        roles: &[Admin, Reviewer, Oncall, Auditor],
    },
    Page {
        path: "/admin",
        label: "Admin",
        roles: &[Admin],
    },
];

/// Paths anyone may open without signing in.
pub const PUBLIC: &[&str] = &["/login"];

/// The page at `path`, if it is a dashboard page. A call's review page (`/calls/ID`)
/// belongs to the queue: the same people may open it.
pub fn page(path: &str) -> Option<&'static Page> {
    let path = if path.starts_with("/calls/") { "/queue" } else { path };
    PAGES.iter().find(|p| p.path == path)
}

/// The pages `role` may open.
pub fn pages_for(role: Role) -> impl Iterator<Item = &'static Page> {
    PAGES.iter().filter(move |p| p.roles.contains(&role))
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
        assert!(page("/admin").unwrap().roles == [Admin]);
        assert!(!page("/audit").unwrap().roles.contains(&Reviewer));
        assert_eq!(
            pages_for(Reviewer).map(|p| p.label).collect::<Vec<_>>(),
            ["Queue", "Grants", "Stats"]
        );
    }
}
