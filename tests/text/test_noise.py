"""The noisy-text control (SPEC §4 P1; German paper §6.2): hand-checked outputs, punctuation kept, seeded."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from dialectbias.text import NOISY, Vocabulary, add_noise, count_words, load_vocabulary, token_length_parity, tokenize
from shared_data import GERMAN, shared_path

SENTENCE = "Der Hund bellt, die Katze schläft."


def _german_vocabulary() -> Path:
    return shared_path(*GERMAN, "deu_news_2024_10K-words_cleaned_5000.txt",
                       why="this test reads its word list")


def test_p_zero_changes_nothing() -> None:
    assert add_noise(SENTENCE, p=0.0, vocabulary=["und"], seed=5) == SENTENCE


def test_replace_mode_replaces_every_word_and_keeps_punctuation() -> None:
    assert add_noise(SENTENCE, p=1.0, vocabulary=["und"], mode="replace") == "und und und, und und und."


def test_mixed_mode_hand_checked_outputs() -> None:
    # seed 1, p = 1, vocabulary ["und"] (letters u, n, d), read off the draws:
    # Der → deleted (takes the following space), Hund → char delete → Hun, bellt → deleted (takes the
    # preceding space), die → substituted by und, Katze → "Katze und" (insert after), schläft → "schläft und"
    assert add_noise(SENTENCE, p=1.0, vocabulary=["und"], seed=1) == "Hun, und Katze und schläft und."
    # seed 2: Der deleted; Hund → char substitute of its d by a random letter that is d again; bellt →
    # "bellt und"; die → "die und"; Katze → char delete → atze; schläft → char delete → schäft
    assert add_noise(SENTENCE, p=1.0, vocabulary=["und"], seed=2) == "Hund bellt und, die und atze schäft."


def test_same_seed_same_output_and_seeds_differ() -> None:
    words = ["und", "der", "oder", "aber"]
    assert add_noise(SENTENCE, vocabulary=words, seed=7) == add_noise(SENTENCE, vocabulary=words, seed=7)
    assert len({add_noise(SENTENCE, vocabulary=words, seed=s) for s in range(10)}) > 5


def test_punctuation_sequence_is_kept() -> None:
    text = "Ja, nein; vielleicht? (Sicher!) — 'gut'."
    for seed in range(20):
        noisy = add_noise(text, p=1.0, vocabulary=["und", "oder"], seed=seed)
        assert re.sub(r"[\w\s]", "", noisy) == re.sub(r"[\w\s]", "", text)


def test_bengali_vowel_signs_stay_with_their_consonant() -> None:
    # character edits act on clusters: no output word may start with a vowel sign (U+09BE–U+09CC, U+0981)
    text = "আমি ভাত খাই। তুমি কী খাও? সে বাড়িতে থাকে।"
    for seed in range(30):
        noisy = add_noise(text, p=1.0, vocabulary=["আমরা", "কিন্তু", "হয়"], seed=seed)
        assert noisy.count("।") == 2 and noisy.count("?") == 1
        for word in tokenize(noisy):
            assert not ("\u09be" <= word[0] <= "\u09cc" or word[0] == "\u0981"), (seed, noisy)


def test_share_of_distorted_words_is_about_p() -> None:
    # mode replace with a vocabulary word that is not in the text: each word changes with probability p
    text = " ".join(f"w{i}" for i in range(4000))
    for p in (0.25, 0.5):
        noisy = add_noise(text, p=p, vocabulary=["xx"], mode="replace", seed=3)
        changed = sum(1 for a, b in zip(text.split(), noisy.split(), strict=True) if a != b) / 4000
        assert changed == pytest.approx(p, abs=0.03)


def test_mixed_mode_edits_are_half_char_half_word() -> None:
    # a word edit puts the vocabulary word "qq" in (substitute/insert) or deletes; a char edit never adds "qq"
    text = " ".join(["abcdef"] * 3000)
    noisy = add_noise(text, p=1.0, vocabulary=["qq"], seed=11)
    toks = noisy.split()
    qq = toks.count("qq")  # substitutes + inserts: 2/3 of the word edits = 1/3 of all words
    kept = toks.count("abcdef")  # only the insert-after keeps the word: 1/6 of all words
    assert qq / 3000 == pytest.approx(1 / 3, abs=0.03)
    assert kept / 3000 == pytest.approx(1 / 6, abs=0.03)


def test_vocabulary_file_and_top(tmp_path: Path) -> None:
    f = tmp_path / "vocab.txt"
    f.write_text("# comment\nder\t100\ndie\t90\n\nund\t80\nder\t5\n", encoding="utf-8")
    vocab = load_vocabulary(f, top=2)
    assert vocab.words == ("der", "die")
    assert "".join(vocab.letters) == "deir"
    assert load_vocabulary(f, top=None).words == ("der", "die", "und")
    with pytest.raises(ValueError, match="no word"):
        Vocabulary.from_words(["", " "])
    with pytest.raises(ValueError, match="cannot read"):
        load_vocabulary(tmp_path / "missing.txt")


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="p must"):
        add_noise("a", p=1.5, vocabulary=["x"])
    with pytest.raises(ValueError, match="needs a vocabulary"):
        add_noise("a")
    with pytest.raises(ValueError, match="mode"):
        add_noise("a", vocabulary=["x"], mode="typo")  # type: ignore[arg-type]


def test_german_news_vocabulary_top_2000() -> None:
    vocab = load_vocabulary(_german_vocabulary())
    assert len(vocab.words) == 2000 and vocab.words[:3] == ("der", "die", "und")
    assert set("äöüß") <= set(vocab.letters)
    noisy = add_noise(SENTENCE, vocabulary=vocab, seed=0)
    assert noisy != SENTENCE and noisy.endswith(".")


def test_count_words_keeps_bengali_vowel_signs_and_skips_digits() -> None:
    counts = count_words(["আমি ভাত খাই।", "আমি ১২ টা ভাত খাই", "Hello hello 42"])
    assert counts["আমি"] == 2 and counts["খাই"] == 2 and counts["ভাত"] == 2
    assert "১২" not in counts and "42" not in counts
    assert count_words(["Hello hello"], lowercase=True)["hello"] == 2


def test_token_length_parity_hand_computed() -> None:
    items = [{"standard": "a b c d", "bavarian": "a b c d e f", NOISY: "a b c"},
             {"standard": "e f", "alemannic": "e f g", NOISY: "d e f g h"},
             {"standard": "x y"}]
    rows = {(r["tokenizer"], r["variant"]): r for r in token_length_parity(items)}
    # whitespace: noisy 3 and 5 tokens → mean 4; its standards 4 + 2 = 6 → 8/6; its dialects 6 + 3 = 9 → 8/9
    noisy = rows[("whitespace", NOISY)]
    assert noisy["mean_tokens"] == 4 and noisy["n_texts"] == 2
    assert noisy["ratio_to_standard"] == pytest.approx(8 / 6)
    assert noisy["ratio_to_dialect"] == pytest.approx(8 / 9)
    # standard: (4 + 2 + 2) / 3 tokens; against its dialects: (4 + 2) / (6 + 3)
    assert rows[("words", "standard")]["mean_tokens"] == pytest.approx(8 / 3)
    assert rows[("words", "standard")]["ratio_to_dialect"] == pytest.approx(6 / 9)
    assert rows[("words", "bavarian")]["ratio_to_standard"] == pytest.approx(6 / 4)
    assert math.isnan(rows[("words", "bavarian")]["ratio_to_dialect"])  # one dialect per item: no pair


# -- letters of the word's script, lowercase; hyphenated words whole (issue 19 item 11) -------------------


def _new_tokens(noisy: str, vocabulary: list[str]) -> list[str]:
    """Output words that are not vocabulary words, i.e. the ones a character edit made (or left alone)."""
    return [t for t in tokenize(noisy, keep_hyphens=True) if t not in vocabulary]


def test_character_edits_insert_no_capital() -> None:
    vocabulary = ["eBay", "iPhone", "McDonald"]  # capitals inside words: the old letter pool had B, P, M, D
    for seed in range(60):
        noisy = add_noise("haus maus laus", p=1.0, vocabulary=vocabulary, seed=seed)
        for token in _new_tokens(noisy, vocabulary):
            assert token.islower(), (seed, noisy)


def test_character_edits_keep_to_the_words_script() -> None:
    vocabulary = ["und", "der", "আমরা", "কিন্তু"]  # a mixed vocabulary: Latin and Bengali letters
    for seed in range(60):
        noisy = add_noise("Hund bellt খাই ভাত", p=1.0, vocabulary=vocabulary, seed=seed)
        for token in _new_tokens(noisy, vocabulary):
            latin = any("a" <= ch.lower() <= "z" for ch in token)
            bengali = any("\u0980" <= ch <= "\u09ff" for ch in token)
            assert not (latin and bengali), (seed, noisy)


def test_letters_for_a_german_word_are_lowercase_latin_with_umlauts_and_eszett() -> None:
    words = ["Über", "schön", "größer", "Straße", "groß", "Mädchen", "Äpfel", "für"]
    words += [f"wort{c}{i}" for c in "abcdefghijklmnopqrstuvwxyz" for i in range(40)]
    vocab = Vocabulary.from_words([*words, "Café"], top=None)  # é: 1 word of 1,049, under MIN_LETTER_SHARE
    letters = set(vocab.letters_for("Hund"))
    assert set("äöüß") <= letters and set("abcdefghijklmnopqrstuvwxyz") <= letters
    assert not any(ch.isupper() for ch in letters) and "é" not in letters


def test_letters_for_a_bengali_word_are_bengali_letters_only() -> None:
    vocab = Vocabulary.from_words(["আমরা", "কিন্তু", "হয়", "the", "Dhaka"], top=None)
    letters = vocab.letters_for("খাই")
    assert letters and all("\u0980" <= ch <= "\u09ff" and ch.isalpha() for ch in letters)
    assert "\u09be" not in letters and "\u09c1" not in letters  # vowel signs are marks, not letters
    assert set(vocab.letters_for("Hund")) == set("thedak")  # the vocabulary's lowercase Latin letters


def test_a_word_in_a_script_the_vocabulary_lacks_draws_its_own_letters() -> None:
    vocab = Vocabulary.from_words(["আমরা", "কিন্তু"], top=None)
    assert set(vocab.letters_for("Dhaka")) == set("dhak")


def test_german_news_letters_are_the_german_alphabet() -> None:
    vocab = load_vocabulary(_german_vocabulary())
    assert set(vocab.letters_for("Hund")) == set("abcdefghijklmnopqrstuvwxyzäöüß")


def test_a_hyphenated_word_is_one_word() -> None:
    assert add_noise("Die E-Mail kam.", p=1.0, vocabulary=["und"], mode="replace") == "und und und."


def test_character_edits_keep_the_hyphen() -> None:
    for seed in range(40):
        noisy = add_noise("Schwarz-Weiß", p=1.0, vocabulary=["qq"], seed=seed)
        if "qq" not in noisy and noisy:  # a character edit
            assert noisy.count("-") == 1 and not noisy.startswith("-") and not noisy.endswith("-"), (seed, noisy)


def test_tokenize_keeps_hyphenated_words_on_request() -> None:
    assert tokenize("good-natured, well - read and E\u2011Mail-") == ["good", "natured", "well", "read", "and", "E",
                                                                      "Mail"]
    assert tokenize("good-natured, well - read and E\u2011Mail-", keep_hyphens=True) == [
        "good-natured", "well", "read", "and", "E\u2011Mail"]
    assert count_words(["good-natured people, good people"]) == {"good-natured": 1, "people": 2, "good": 1}
