//! docs/RULES.md §2.6 and D8 over HTTP: a player whose play leaves one card
//! unannounced can be challenged by a player who is not on turn; the
//! challenge makes the target draw the penalty and closes the window.

use crate::support::{json_of, play, started_table, view};
use e2e::{assert_problem, spawn_app};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

fn seat(v: &Value) -> usize {
    v.as_u64().expect("a seat") as usize
}

#[tokio::test]
async fn d8_a_player_not_on_turn_challenges_an_unannounced_last_card() {
    let app = spawn_app().await;
    let (id, tokens) = started_table(&app, "moderne", json!({}), 3).await;
    let mut rng = StdRng::seed_from_u64(8);
    for _ in 0..4000 {
        let v = view(&app, &tokens[0], &id).await;
        if v["status"] == "finished" {
            break;
        }
        let current = seat(&v["current_seat"]);
        let mine = view(&app, &tokens[current], &id).await;
        let moves = mine["legal_moves"].as_array().expect("moves").clone();
        // A play that leaves one card, deliberately not announced.
        let silent = moves.iter().find(|m| {
            m["type"] == "play"
                && m["announce"] == false
                && mine["hand"].as_array().map(Vec::len) == Some(2)
        });
        let Some(silent) = silent else {
            let mv = moves
                .iter()
                .filter(|m| m["type"] != "challenge")
                .nth(rng.gen_range(0..moves.iter().filter(|m| m["type"] != "challenge").count()))
                .expect("a move");
            json_of(play(&app, &tokens[current], &id, mv, None).await, 200).await;
            continue;
        };
        let answer = json_of(play(&app, &tokens[current], &id, silent, None).await, 200).await;
        let after = &answer["view"];
        if after["status"] == "finished" || after["round"] != mine["round"] {
            continue; // the play ended the round: nothing to challenge
        }
        let target = current;
        let on_turn = seat(&after["current_seat"]);
        let Some(challenger) = (0..3).find(|s| *s != target && *s != on_turn) else {
            continue; // the target plays again (a replay): try another time
        };
        let theirs = view(&app, &tokens[challenger], &id).await;
        let challenge = json!({"type": "challenge", "seat": target});
        assert!(
            theirs["legal_moves"]
                .as_array()
                .expect("moves")
                .contains(&challenge),
            "the challenge is listed for a player not on turn: {theirs}"
        );
        // The target cannot challenge itself.
        assert_problem(
            play(&app, &tokens[target], &id, &challenge, None).await,
            422,
            "cannot_challenge",
        )
        .await;
        let before = theirs["players"][target]["hand_size"]
            .as_u64()
            .expect("size");
        let res = json_of(
            play(&app, &tokens[challenger], &id, &challenge, None).await,
            200,
        )
        .await;
        let kinds: Vec<&str> = res["events"]
            .as_array()
            .expect("events")
            .iter()
            .map(|e| e["type"].as_str().expect("type"))
            .collect();
        assert_eq!(kinds[0], "challenged");
        assert!(kinds.contains(&"cards_drawn"));
        let now = &res["view"]["players"][target];
        assert_eq!(
            now["hand_size"].as_u64(),
            Some(before + 2),
            "moderne's penalty is 2 cards"
        );
        // The window is closed: a second challenge is refused.
        assert_problem(
            play(&app, &tokens[challenger], &id, &challenge, None).await,
            422,
            "cannot_challenge",
        )
        .await;
        return;
    }
    panic!("no unannounced last card came up to challenge");
}
