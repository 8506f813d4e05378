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

/// The schema `member` stands for (itself, or the component it refers to).
fn resolved<'a>(doc: &'a Value, member: &'a Value) -> &'a Value {
    match member["$ref"].as_str() {
        Some(r) => &doc["components"]["schemas"][r.trim_start_matches("#/components/schemas/")],
        None => member,
    }
}

/// Every union a generator reads as one (README "Clients for Android,
/// Flutter and iOS"): tagged inside with a `discriminator` that maps every
/// tag, each member's tag a one-value enum of its own, not named `Type`;
/// or told apart by the keys a member requires, every member requiring one
/// no other member does (an event's part, which says `part`, may hold every
/// required key of its whole), its words one string with a pattern.
#[test]
fn every_union_is_tagged_or_its_members_require_keys_of_their_own() {
    let doc = document();
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    let mut tagged = 0;
    for (name, schema) in schemas
        .iter()
        .filter(|(_, s)| s.get("discriminator").is_some())
    {
        let tag = schema["discriminator"]["propertyName"].as_str().unwrap();
        let mapping = schema["discriminator"]["mapping"].as_object().unwrap();
        assert_eq!(
            mapping.len(),
            schema["oneOf"].as_array().unwrap().len(),
            "{name}"
        );
        for (value, member) in mapping {
            let member = &schemas[member
                .as_str()
                .unwrap()
                .trim_start_matches("#/components/schemas/")];
            let own = &member["properties"][tag]["$ref"];
            assert!(own.is_string(), "{name}: {value}'s tag is a component");
            let own = resolved(&doc, &member["properties"][tag]);
            assert_eq!(own["enum"], serde_json::json!([value]), "{name}: {value}");
        }
        tagged += 1;
    }
    assert_eq!(tagged, 4, "Move, Pending, Correction and the events' union");
    // The others: the components' and the events' data's, but a nullable
    // value's (`null` or one schema).
    let data = schemas.values().map(|s| &s["properties"]["data"]);
    let untagged: Vec<&Vec<Value>> = schemas
        .values()
        .filter(|s| s.get("discriminator").is_none())
        .chain(data)
        .filter_map(|s| s["oneOf"].as_array())
        .filter(|members| members.iter().all(|m| m["type"] != "null"))
        .collect();
    assert!(
        untagged.len() >= 11,
        "the knobs and the events' data: {}",
        untagged.len()
    );
    let required = |m: &Value| -> Vec<String> {
        let keys = m["required"].as_array().into_iter().flatten();
        keys.filter_map(|k| k.as_str().map(str::to_owned)).collect()
    };
    for members in untagged {
        let words: Vec<&Value> = members.iter().filter(|m| m["type"] == "string").collect();
        assert!(words.len() <= 1, "{words:?}");
        for word in words {
            assert!(
                word.get("enum").is_none() && word["pattern"].is_string(),
                "{word}"
            );
        }
        let objects: Vec<(&str, &Value)> = members
            .iter()
            .filter(|m| m["type"] != "string")
            .map(|m| (m["$ref"].as_str().unwrap_or("inline"), resolved(&doc, m)))
            .collect();
        for (i, (name, member)) in objects.iter().enumerate() {
            let own = required(member);
            let is_part = name.ends_with("Seen");
            assert_eq!(
                is_part,
                own.iter().any(|k| k == "part"),
                "{name}: only a part says `part`"
            );
            let others = objects.iter().enumerate().filter(|(j, _)| *j != i);
            for (_, (other, theirs)) in others.filter(|(_, (n, _))| !n.ends_with("Seen")) {
                let theirs = required(theirs);
                assert!(
                    own.iter().any(|k| !theirs.contains(k)),
                    "{name} requires no key {other} does not"
                );
            }
        }
    }
}

/// `GET …/log` is text to every generator, its lines' schema named.
#[test]
fn log_lines_are_text_whose_item_schema_is_the_stored_event() {
    let doc = document();
    let content = &doc["paths"]["/v1/tables/{id}/log"]["get"]["responses"]["200"]["content"];
    for media_type in ["application/x-ndjson", "text/plain"] {
        assert_eq!(
            content[media_type]["schema"]["type"], "string",
            "{media_type}"
        );
        let item = &content[media_type]["x-itemSchema"]["$ref"];
        assert_eq!(item, "#/components/schemas/StoredEvent", "{media_type}");
    }
}
