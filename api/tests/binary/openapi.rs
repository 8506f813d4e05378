//! `openapi/openapi.json` must be exactly what the code generates. To
//! regenerate: `cargo run -p api --bin huit -- openapi > openapi/openapi.json`.

use serde_json::Value;

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

fn document() -> Value {
    serde_json::from_str(&api::openapi::document_json()).unwrap()
}

/// Every `$ref` in `value`, with where it stands.
fn refs<'a>(value: &'a Value, at: String, out: &mut Vec<(String, &'a str)>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                match (key.as_str(), v) {
                    ("$ref", Value::String(r)) => out.push((at.clone(), r)),
                    _ => refs(v, format!("{at}/{key}"), out),
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                refs(v, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_operation_documents_an_error_and_every_body_an_example() {
    let doc = document();
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let responses = op["responses"].as_object().unwrap();
            assert!(
                responses
                    .keys()
                    .any(|s| s.starts_with('4') || s.starts_with('5')),
                "{method} {path} documents no error"
            );
            // What a client sends and gets, each shown by an example in
            // the interactive documentation.
            let bodies = responses
                .values()
                .chain(std::iter::once(&op["requestBody"]))
                .filter_map(|r| r["content"].as_object())
                .flat_map(|content| content.values());
            for body in bodies {
                let schema = &body["schema"];
                let named = schema["$ref"]
                    .as_str()
                    .and_then(|r| r.strip_prefix("#/components/schemas/"))
                    .map(|name| &schemas[name]);
                let shown = named.unwrap_or(schema);
                let is_list = shown["type"] == "array";
                assert!(
                    is_list || shown.get("example").is_some() || shown.get("examples").is_some(),
                    "a body of {method} {path} has no example"
                );
            }
        }
    }
}

#[test]
fn every_reference_names_a_component() {
    let doc = document();
    let mut found = Vec::new();
    refs(&doc, String::new(), &mut found);
    assert!(found.len() > 100, "the document has its references");
    for (at, r) in found {
        let name = r
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("{at}: {r} is not a component"));
        assert!(
            doc["components"]["schemas"].get(name).is_some(),
            "{at}: no component {name}"
        );
    }
}

/// The examples a client reads are answers the schema accepts: each
/// component's `example` (or `examples`) validates against the component.
#[test]
fn every_example_matches_its_schema() {
    let doc = document();
    let mut checked = 0;
    for (name, schema) in doc["components"]["schemas"].as_object().unwrap() {
        let examples: Vec<&Value> = match (schema.get("example"), schema.get("examples")) {
            (Some(one), _) => vec![one],
            (None, Some(Value::Array(many))) => many.iter().collect(),
            _ => continue,
        };
        let mut root = doc.clone();
        root["$ref"] = Value::String(format!("#/components/schemas/{name}"));
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&root)
            .unwrap_or_else(|e| panic!("{name} compiles: {e}"));
        for example in examples {
            let errors: Vec<String> = validator
                .iter_errors(example)
                .map(|e| format!("{e} at {}", e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "the example of {name}: {errors:?}");
            checked += 1;
        }
    }
    assert!(checked > 40, "examples checked: {checked}");
}
