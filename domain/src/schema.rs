//! The engine's unions as OpenAPI schemas that every client generator reads
//! as the tagged unions they are (README "Clients for Android, Flutter and
//! iOS"): the public log's events (docs/API.md "The event log"), one
//! component per event type, `{type, data}`, its `data` typed from the
//! engine's own event types (where a reader may be shown part of it,
//! [`crate::redaction`], the whole or the part; from format version 2 the
//! whole carries its `salt`); the moves; the pending constraint; the rules'
//! knobs.

use utoipa::openapi::schema::{
    Discriminator, Object, ObjectBuilder, OneOf, OneOfBuilder, Schema, SchemaType, Type,
};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

use crate::event::Placing;
use crate::event::{Event, Move, Pending};
use crate::redaction::{
    BotMovedSeen, CardsDrawnSeen, RoundStartedSeen, StockReshuffledSeen, TurnStartedSeen, PART_KEY,
};
use crate::rules::{Deal, Decks, Effect, End, Points, Scoring};
use crate::table::events::TableEvent;
use crate::table::{Correction, PlayerId, ResultCorrected};

/// The name of the union of every event's `{type, data}`.
pub const EVENT_BODY: &str = "EventBody";

/// The part of an event a reader may be shown while its round runs, for the
/// types that hide something ([`crate::redaction`]'s `Seen::Part`s).
/// Its name, and its schema (with its [`PART_KEY`], a plain boolean:
/// generators make a one-value boolean enum a broken enum) and those it
/// refers to are added to `components`.
fn part_of(kind: &str, components: &mut Vec<(String, RefOr<Schema>)>) -> Option<String> {
    fn named<T: ToSchema>(components: &mut Vec<(String, RefOr<Schema>)>) -> Option<String> {
        let mut part = object(T::schema());
        let marker = ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::Boolean))
            .description(Some(
                "Always `true`: this is the part of the event this reader may see, \
                 which whole data never says.",
            ));
        part.properties.insert(PART_KEY.into(), marker.into());
        part.required.push(PART_KEY.into());
        components.push((T::name().into_owned(), RefOr::T(Schema::Object(part))));
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

/// The salt of a version-2 event's whole data, a property of it.
fn salt() -> Object {
    ObjectBuilder::new()
        .schema_type(SchemaType::Type(Type::String))
        .pattern(Some("^[0-9a-f]{32}$"))
        .description(Some(
            "From format version 2 (`v: 2`), the whole data of an event carries `salt`, \
             32 lowercase hex digits hashed with it; a part of an event (some of its data \
             hidden from the reader) never does.",
        ))
        .build()
}

/// A derived schema that is a `oneOf` (every union serde writes).
fn one_of(union: RefOr<Schema>) -> OneOf {
    let RefOr::T(Schema::OneOf(one_of)) = union else {
        unreachable!("a union is a oneOf");
    };
    one_of
}

/// An object of a derived union (each member utoipa derives for a serde
/// enum is one).
fn object(member: RefOr<Schema>) -> Object {
    let RefOr::T(Schema::Object(object)) = member else {
        unreachable!("each member is an object");
    };
    object
}

/// The members of a union serde tags inside (`#[serde(tag = ..)]`) as
/// utoipa derives it: each member's `tag` value and its object.
fn members(union: RefOr<Schema>, tag: &str) -> Vec<(String, Object)> {
    one_of(union)
        .items
        .into_iter()
        .map(|member| {
            let object = object(member);
            let value = match object.properties.get(tag) {
                Some(RefOr::T(Schema::Object(tag))) => tag
                    .enum_values
                    .as_ref()
                    .and_then(|v| v.first())
                    .and_then(|v| v.as_str())
                    .expect("a tag names its member")
                    .to_owned(),
                _ => unreachable!("each member has its tag"),
            };
            (value, object)
        })
        .collect()
}

/// A union tagged inside its members, as generators read one: each member
/// a component named by `name` from its tag's value (`PlayMove`), whose
/// tag is a one-value enum of its own (`PlayMoveType`: generators name an
/// inline enum after its property, and Swift renames `Type`, a reserved
/// word, `ModelType`), and their `oneOf` with a `discriminator` mapping
/// each value to its member, so that generators choose the member by the
/// tag instead of trying each (nothing includes the union by `allOf`,
/// which made openapi-typescript overwrite the tag when something did).
fn tagged(
    members: Vec<(String, Object)>,
    tag: &str,
    name: impl Fn(&str) -> String,
    components: &mut Vec<(String, RefOr<Schema>)>,
) -> OneOfBuilder {
    let mut union = OneOfBuilder::new();
    let mut mapping = Vec::new();
    for (value, mut object) in members {
        let member = name(&value);
        let tag_name = format!("{member}{}", camel(tag));
        let tag_schema = object
            .properties
            .insert(tag.into(), Ref::from_schema_name(&tag_name).into())
            .expect("each member has its tag");
        components.push((tag_name, tag_schema));
        mapping.push((value, format!("#/components/schemas/{member}")));
        union = union.item(Ref::from_schema_name(&member));
        components.push((member, RefOr::T(Schema::Object(object))));
    }
    union.discriminator(Some(Discriminator::with_mapping(tag, mapping)))
}

/// A union serde tags outside its members (`"skip"`, `{"attack_chain": 2}`),
/// as generators read one: each object member, whose one key is its tag, a
/// component named `{Key}{Union}` (`AttackChainEffect`), and the words
/// together one string member, inline, whose `pattern` lists them. Their
/// keys and words differ, so a value is exactly one member, which every
/// generator finds. A string, not an enum: Kotlin's decoder tries a member
/// that is a component only on an object, Dart names an inline enum
/// without defining it, and Swift names it `String`, a reserved word;
/// and an app decodes a word added later as the string it is.
fn external<T: ToSchema>() -> Vec<(String, RefOr<Schema>)> {
    let name = T::name();
    let derived = one_of(T::schema());
    let mut components = Vec::new();
    let mut union = OneOfBuilder::new().description(derived.description);
    let (mut words, mut notes) = (Vec::new(), Vec::new());
    for member in derived.items.into_iter().map(object) {
        match (&member.enum_values, member.required.as_slice()) {
            (Some(values), _) => {
                let word = values.first().and_then(|w| w.as_str()).unwrap_or_default();
                words.push(word.to_owned());
                notes.push(match &member.description {
                    Some(note) => format!("`{word}`: {note}"),
                    None => format!("`{word}`"),
                });
            }
            (None, [key]) => {
                let member_name = format!("{}{name}", camel(key));
                union = union.item(Ref::from_schema_name(&member_name));
                components.push((member_name, RefOr::T(Schema::Object(member))));
            }
            (None, _) => unreachable!("an object member of {name} has one key"),
        }
    }
    if !words.is_empty() {
        union = union.item(
            ObjectBuilder::new()
                .schema_type(SchemaType::Type(Type::String))
                .pattern(Some(format!("^({})$", words.join("|"))))
                .description(Some(format!("One of {}.", notes.join("; ")))),
        );
    }
    components.push((name.into_owned(), RefOr::T(Schema::OneOf(union.build()))));
    components
}

/// Every union of the document but the events' ([`event_components`]), as
/// generators read them, in place of the derived ones: the moves, the
/// pending constraint and an admin's correction of a result tagged inside
/// (`tagged`), the rules' knobs tagged outside (`external`).
pub fn union_components() -> Vec<(String, RefOr<Schema>)> {
    let mut components = tagged_union::<Move>("type", |union| {
        union
            .description(Some(
                "A player's move, exactly as posted to `POST /v1/tables/{id}/moves`.",
            ))
            .examples([
                serde_json::json!({"type": "play", "card": "8H", "suit": "S", "announce": false}),
            ])
    });
    let pending = one_of(Pending::schema()).description;
    components.extend(tagged_union::<Pending>("kind", |union| {
        union.description(pending)
    }));
    let correction = one_of(Correction::schema()).description;
    components.extend(tagged_union::<Correction>("kind", |union| {
        union.description(correction)
    }));
    components.extend(external::<Decks>());
    components.extend(external::<Deal>());
    components.extend(external::<Effect>());
    components.extend(external::<Points>());
    components.extend(external::<Scoring>());
    components.extend(external::<End>());
    components
}

/// `T`, a union serde tags inside on `tag`, as [`tagged`] makes it, its
/// members named `{value}{T}` (`PlayMove`, `AttackPending`), with what
/// `finish` adds (a description, examples).
fn tagged_union<T: ToSchema>(
    tag: &str,
    finish: impl FnOnce(OneOfBuilder) -> OneOfBuilder,
) -> Vec<(String, RefOr<Schema>)> {
    let mut components = Vec::new();
    let union_name = T::name();
    let union = tagged(
        members(T::schema(), tag),
        tag,
        |value| format!("{}{union_name}", camel(value)),
        &mut components,
    );
    let union = finish(union).build();
    components.push((union_name.into_owned(), RefOr::T(Schema::OneOf(union))));
    components
}

/// An event's whole data as one object with its `salt`: `whole`, or the
/// component it refers to, copied.
fn whole_with_salt(whole: RefOr<Schema>, components: &[(String, RefOr<Schema>)]) -> Object {
    let mut object = match whole {
        RefOr::T(Schema::Object(object)) => object,
        RefOr::Ref(r) => {
            let name = r.ref_location.rsplit('/').next().unwrap_or_default();
            match components.iter().find(|(n, _)| n == name) {
                Some((_, RefOr::T(Schema::Object(object)))) => object.clone(),
                _ => unreachable!("the data {name} is an object among the components"),
            }
        }
        _ => unreachable!("an event's data is an object"),
    };
    object.properties.insert("salt".into(), salt().into());
    object
}

/// Every schema the events need: one component per event type, the union
/// of them all ([`EVENT_BODY`], told apart by `type`), and what they
/// refer to. Where a reader may be shown part of an event, its data is
/// one of two components, `{Type}Whole` (with the salt) and `{Type}Seen`,
/// which no value can be both of (their required fields differ, and a
/// part takes no other field).
pub fn event_components() -> Vec<(String, RefOr<Schema>)> {
    let mut components = Vec::new();
    <TableEvent as ToSchema>::schemas(&mut components);
    <Event as ToSchema>::schemas(&mut components);
    let mut events = Vec::new();
    for (kind, mut object) in members(TableEvent::schema(), "type")
        .into_iter()
        .chain(members(Event::schema(), "type"))
    {
        let whole = object
            .properties
            .remove("data")
            .expect("each event has data");
        let whole = whole_with_salt(whole, &components);
        let data = match part_of(&kind, &mut components) {
            Some(seen) => {
                let name = format!("{}Whole", camel(&kind));
                components.push((name.clone(), RefOr::T(Schema::Object(whole))));
                OneOfBuilder::new()
                    .item(Ref::from_schema_name(name))
                    .item(Ref::from_schema_name(seen))
                    .description(Some(
                        "The whole data, or, while its round runs, the part this reader may see",
                    ))
                    .into()
            }
            None => Schema::Object(whole),
        };
        object.properties.insert("data".into(), RefOr::T(data));
        events.push((kind, object));
    }
    let union = tagged(
        events,
        "type",
        |kind| format!("{}Event", camel(kind)),
        &mut components,
    )
    .description(Some(
        "An event's `type` and its `data`: one member per type, told apart by `type`.",
    ));
    components.push((EVENT_BODY.into(), RefOr::T(Schema::OneOf(union.build()))));
    components
}

// `ResultCorrected` as the wire has it: serde flattens its grounds, which
// utoipa would show as an `allOf` no generator names.
/// `result_corrected`: a correction and the result it makes, on the
/// grounds of a dispute (`dispute_id`) or of a sanction (`sanction_id`),
/// one of the two.
#[derive(ToSchema)]
#[schema(as = ResultCorrected)]
#[allow(dead_code)]
struct ResultCorrectedSchema {
    /// The dispute upheld.
    #[schema(format = Uuid, nullable = false)]
    dispute_id: Option<String>,
    /// The sanction that voided the sanctioned account's rated games.
    #[schema(format = Uuid, nullable = false)]
    sanction_id: Option<String>,
    /// The admin's account id.
    by: PlayerId,
    correction: Correction,
    ranking: Vec<Placing>,
    winners: Vec<usize>,
    losers: Vec<usize>,
    /// The totals by seat (index = seat).
    totals: Vec<i32>,
    /// Whether the game is rated as corrected: as it was, unless voided.
    rated: bool,
}

impl utoipa::PartialSchema for ResultCorrected {
    fn schema() -> RefOr<Schema> {
        ResultCorrectedSchema::schema()
    }
}

impl ToSchema for ResultCorrected {
    fn name() -> std::borrow::Cow<'static, str> {
        ResultCorrectedSchema::name()
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        ResultCorrectedSchema::schemas(schemas)
    }
}
