-- Corrections and sanctions (docs/API.md "Corrections and sanctions"): a
-- corrected game's players are told in their feeds.
ALTER TABLE feed_items DROP CONSTRAINT feed_items_kind_valid;
ALTER TABLE feed_items ADD CONSTRAINT feed_items_kind_valid
    CHECK (kind IN ('your_turn', 'turn_ending', 'game_started', 'game_over',
                    'rematch_offered', 'result_corrected'));

-- An upheld dispute's correction of the game's result, as appended to the
-- table's log (`result_corrected`'s `correction`), shown to its filer.
ALTER TABLE disputes ADD COLUMN correction jsonb;
ALTER TABLE disputes ADD CONSTRAINT disputes_correction_upheld
    CHECK (correction IS NULL OR verdict = 'upheld');

-- A correction is an admin action of its own.
ALTER TABLE admin_actions DROP CONSTRAINT admin_actions_action_valid;
ALTER TABLE admin_actions ADD CONSTRAINT admin_actions_action_valid
    CHECK (action IN ('resolve_dispute', 'replay_running_round', 'export_log', 'audit',
                      'retry_webhook', 'resume_webhooks', 'erase_account', 'correct_result'));
