//! `openapi/openapi.json` must be exactly what the code generates. To
//! regenerate: `cargo run -p api --bin huit -- openapi > openapi/openapi.json`.

#[test]
fn committed_openapi_json_is_up_to_date() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../openapi/openapi.json");
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    let generated = api::openapi::document_json();
    assert!(
        committed == generated,
        "openapi/openapi.json is stale; regenerate it with \
         `cargo run -p api --bin huit -- openapi > openapi/openapi.json`"
    );
}

#[test]
fn every_operation_has_a_documented_error_and_every_schema_an_example() {
    let doc: serde_json::Value = serde_json::from_str(&api::openapi::document_json()).unwrap();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let responses = op["responses"].as_object().unwrap();
            assert!(
                responses
                    .keys()
                    .any(|s| s.starts_with('4') || s.starts_with('5')),
                "{method} {path} documents no error"
            );
        }
    }
    for (name, schema) in doc["components"]["schemas"].as_object().unwrap() {
        if name == "Role" {
            continue; // an enum: its values are the example
        }
        assert!(
            schema.get("example").is_some(),
            "schema {name} has no example"
        );
    }
}
