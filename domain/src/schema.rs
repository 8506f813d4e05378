//! The public log's events as OpenAPI schemas (docs/API.md "The event log"):
//! one component per event type, `{type, data}`, its `data` typed from the
//! engine's own event types; where a reader may be shown part of it
//! ([`crate::redaction`]), the data is either the whole or the part; and
//! from format version 2 the whole data carries its `salt`.

use utoipa::openapi::schema::{
    AllOfBuilder, AnyOfBuilder, Discriminator, Object, ObjectBuilder, OneOfBuilder, Schema,
    SchemaType, Type,
};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

use crate::event::{Event, Move};
use crate::redaction::{
    BotMovedSeen, CardsDrawnSeen, RoundStartedSeen, StockReshuffledSeen, TurnStartedSeen,
};
use crate::table::events::TableEvent;

/// The name of the union of every event's `{type, data}`.
pub const EVENT_BODY: &str = "EventBody";

/// The part of an event a reader may be shown while its round runs, for the
/// types that hide something ([`crate::redaction`]'s `Seen::Part`s).
/// Its name, and its schema and those it refers to are added to
/// `components`.
fn part_of(kind: &str, components: &mut Vec<(String, RefOr<Schema>)>) -> Option<String> {
    fn named<T: ToSchema>(components: &mut Vec<(String, RefOr<Schema>)>) -> Option<String> {
        components.push((T::name().into_owned(), T::schema()));
        T::schemas(components);
        Some(T::name().into_owned())
    }
    match kind {
        "round_started" => named::<RoundStartedSeen>(components),
        "cards_drawn" => named::<CardsDrawnSeen>(components),
        "stock_reshuffled" => named::<StockReshuffledSeen>(components),
        "turn_started" => named::<TurnStartedSeen>(components),
        "bot_moved" => named::<BotMovedSeen>(components),
        _ => None,
    }
}

/// `UpperCamelCase` of a snake_case event type.
fn camel(kind: &str) -> String {
    kind.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The salt of a version-2 event's whole data.
fn salt() -> Schema {
    ObjectBuilder::new()
        .description(Some(
            "From format version 2 (`v: 2`), the whole data of an event carries `salt`, \
             32 lowercase hex digits hashed with it; a part of an event (some of its data \
             hidden from the reader) never does.",
        ))
        .property(
            "salt",
            ObjectBuilder::new()
                .schema_type(SchemaType::Type(Type::String))
                .pattern(Some("^[0-9a-f]{32}$")),
        )
        .into()
}

/// The members of a union tagged by `type` as utoipa derives it: each
/// member's `type` value and its object.
fn members(union: RefOr<Schema>) -> Vec<(String, Object)> {
    let RefOr::T(Schema::OneOf(one_of)) = union else {
        unreachable!("a tagged enum is a oneOf");
    };
    one_of
        .items
        .into_iter()
        .map(|member| {
            let RefOr::T(Schema::Object(object)) = member else {
                unreachable!("each member is an object");
            };
            let kind = match object.properties.get("type") {
                Some(RefOr::T(Schema::Object(tag))) => tag
                    .enum_values
                    .as_ref()
                    .and_then(|v| v.first())
                    .and_then(|v| v.as_str())
                    .expect("a tag names its member")
                    .to_owned(),
                _ => unreachable!("each member has its type"),
            };
            (kind, object)
        })
        .collect()
}

/// The move union: one component per move (`PlayMove`, `DrawMove`,
/// `PassMove`, `ChallengeMove`) and `Move`, their `oneOf` with a
/// `discriminator` on `type` (nothing includes `Move` by `allOf`, so
/// generators read it as the union it is).
pub fn move_components() -> Vec<(String, RefOr<Schema>)> {
    let mut components = Vec::new();
    let mut union = OneOfBuilder::new();
    let mut mapping = Vec::new();
    for (kind, object) in members(Move::schema()) {
        let name = format!("{}Move", camel(&kind));
        mapping.push((kind, format!("#/components/schemas/{name}")));
        union = union.item(Ref::from_schema_name(&name));
        components.push((name, RefOr::T(Schema::Object(object))));
    }
    let union = union
        .discriminator(Some(Discriminator::with_mapping("type", mapping)))
        .description(Some(
            "A player's move, exactly as posted to `POST /v1/tables/{id}/moves`.",
        ))
        .examples([
            serde_json::json!({"type": "play", "card": "8H", "suit": "S", "announce": false}),
        ]);
    components.push((
        <Move as ToSchema>::name().into_owned(),
        RefOr::T(Schema::OneOf(union.build())),
    ));
    components
}

/// Every schema the events need: one component per event type, the union
/// of them all ([`EVENT_BODY`], told apart by `type`), and what they
/// refer to.
pub fn event_components() -> Vec<(String, RefOr<Schema>)> {
    let mut components = Vec::new();
    <TableEvent as ToSchema>::schemas(&mut components);
    <Event as ToSchema>::schemas(&mut components);
    let mut union = OneOfBuilder::new();
    let mut mapping = Vec::new();
    for (kind, mut object) in members(TableEvent::schema())
        .into_iter()
        .chain(members(Event::schema()))
    {
        let whole = object
            .properties
            .remove("data")
            .expect("each event has data");
        let data = match part_of(&kind, &mut components) {
            Some(name) => RefOr::T(
                AnyOfBuilder::new()
                    .item(whole)
                    .item(Ref::from_schema_name(name))
                    .description(Some(
                        "The whole data, or, while its round runs, the part this reader may see",
                    ))
                    .into(),
            ),
            None => whole,
        };
        let data = AllOfBuilder::new().item(data).item(salt()).build();
        object
            .properties
            .insert("data".into(), RefOr::T(Schema::AllOf(data)));
        let name = format!("{}Event", camel(&kind));
        mapping.push((kind, format!("#/components/schemas/{name}")));
        union = union.item(Ref::from_schema_name(&name));
        components.push((name, RefOr::T(Schema::Object(object))));
    }
    // Each member's `type` is a one-value enum, and the `discriminator`
    // maps it to its member, so that generators choose the member by the
    // tag instead of trying each. (The store makes each member a complete
    // stored event; nothing includes this union by `allOf`, which made
    // openapi-typescript overwrite `type` when it did.)
    let union = union
        .discriminator(Some(Discriminator::with_mapping("type", mapping)))
        .description(Some(
            "An event's `type` and its `data`: one member per type, told apart by `type`.",
        ));
    components.push((EVENT_BODY.into(), RefOr::T(Schema::OneOf(union.build()))));
    components
}
