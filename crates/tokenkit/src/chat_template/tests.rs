use super::*;
use serde_json::json;

fn render(src: &str, messages: Json, opts: &ChatOptions) -> String {
    ChatTemplate::new(src).unwrap().render(&messages, opts).unwrap()
}
