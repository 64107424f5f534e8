//! Every dialect's parser and text recovery on arbitrary replies: no panic, and every call it
//! returns names an offered tool or keeps the name exactly as written, with JSON-object
//! arguments.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tinytools::dialect::Dialect;
use tinytools_fuzz::schemas;

fuzz_target!(|data: &[u8]| {
    let reply = String::from_utf8_lossy(data);
    let tools = schemas();
    let deferred = vec!["weather_forecast".to_owned()];
    for dialect in [Dialect::JsonInTag, Dialect::PFormat, Dialect::Native] {
        let (calls, _text) = dialect.parse_offered(&reply, &tools, &deferred);
        for call in calls {
            let offered = tools.iter().any(|t| t.name == call.name) || deferred.contains(&call.name);
            assert!(offered || reply.contains(&call.name), "{dialect:?} invented `{}`", call.name);
            let arguments: serde_json::Value = serde_json::from_str(&call.arguments).expect("arguments are JSON");
            assert!(arguments.is_object(), "{dialect:?}: {arguments}");
        }
    }
});
