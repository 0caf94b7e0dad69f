"""The HTML report's parts escape by construction, link only http(s), and never cut a message."""

from conformance.reporting.html_parts import defects, link, linked, message


def test_a_message_is_whole_behind_a_fold_with_its_links_whole():
    url = "https://github.com/pytorch/rl/issues/2402"
    body = "AssertionError: mode differs " + "x" * 600 + f" see {url}\nsecond line"
    html = message({"message": body, "outcome": "fail"})
    assert "<details><summary>" in html and "second line</pre></details>" in html
    assert f"<a href='{url}'>{url}</a>" in html
    assert "x" * 600 in html


def test_upstream_text_is_data_never_markup():
    html = message({"message": "<script>alert(1)</script> <img src=x onerror=y>",
                    "reason": "<b>bold</b>", "link": "javascript:alert(1)", "defect": "a'b"})
    assert "<script>" not in html and "<img" not in html and "<b>" not in html
    assert "&lt;script&gt;" in html and "href='javascript" not in html
    assert "a&#x27;b" in html


def test_only_http_links_become_anchors():
    assert link("https://example.org/a?b=1&c=2") == (
        "<a href='https://example.org/a?b=1&amp;c=2'>https://example.org/a?b=1&amp;c=2</a>")
    assert link("file:///etc/passwd") == "file:///etc/passwd"
    assert linked("see http://x.org/a'onmouseover='b") .startswith("see <a href='http://x.org/a'>")


def test_a_defects_thread_is_listed_once():
    # composite-mean-exploration-nan-categorical's upstream link, the link its entries carry and
    # its first prior thread are the same rl#2402: its row links it once
    row = {"outcome": "known failure", "defect": "composite-mean-exploration-nan-categorical",
           "impl": "torchrl", "label": "torchrl 0.14.1"}
    html = defects([row])
    assert html.count("href='https://github.com/pytorch/rl/issues/2402'") == 1, html
