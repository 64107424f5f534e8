//! TEMPORARY: live-suite experiment switches (`TINYTOOLS_VARIANT=a,b`). Removed before landing.

pub(crate) fn on(name: &str) -> bool {
    std::env::var("TINYTOOLS_VARIANT").is_ok_and(|v| v.split(',').any(|x| x.trim() == name))
}
