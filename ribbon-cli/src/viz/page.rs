//! The page: one HTML file holding its style, its scripts and the trace
//! (no network, no external scripts or fonts), so it works from `file://`.

const TEMPLATE: &str = include_str!("page.html");
const STYLE: &str = include_str!("page.css");
/// XXPH3, the key hash, for the query box (checked against the crate's).
const HASH_JS: &str = include_str!("xxph3.js");
const SCRIPT: &str = include_str!("page.js");

/// The page with `json` (the trace) embedded.
pub fn render(json: &str) -> String {
    // Inside <script>, `</script` ends the element and `<!--` changes how
    // the rest is parsed; `<` occurs only inside JSON strings, where
    // `\u003c` means the same.
    let data = json.replace('<', "\\u003c");
    TEMPLATE
        .replace("/*STYLE*/", STYLE)
        .replace("/*HASH*/", HASH_JS)
        .replace("/*SCRIPT*/", SCRIPT)
        .replace("{/*DATA*/}", &data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_cannot_close_its_script_element() {
        let page = render(r#"{"keys":[{"text":"</script><!--<b>x</b>"}]}"#);
        assert!(!page.contains("</script><!--"));
        assert!(page.contains(r#"\u003c/script>\u003c!--\u003cb>x\u003c/b>"#));
    }
}
