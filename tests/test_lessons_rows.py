"""The Memories page's lesson rows: each stored lesson with its track record (studio/lessons.py)."""

from studio.lessons import lesson_rows, ranked_rows, sort_rows, track_records


def _lessons():
    return [{"id": f"L{i}", "recommendation": f"advice {i}", "situation": f"situation {i}",
             "known_from": "2024-01-05" if i % 2 else None, "retired": i == 2} for i in range(4)]


def test_rows_carry_each_lessons_record_and_an_empty_one_for_a_lesson_never_retrieved():
    runs = [{"ticker": "NVDA", "date": "2024-02-05", "memory_used": {"lessons": {"bull_memory": [{"id": "L1"}]}}},
            {"ticker": "AAPL", "date": "2024-02-05", "memory_used": {"lessons": {"bull_memory": [{"id": "L1"}]}}},
            {"ticker": "MSFT", "date": "2024-02-05", "memory_used": {"lessons": {"bear_memory": [{"id": "L3"}]}}}]
    entries = [{"ticker": "NVDA", "date": "2024-02-05", "pending": False, "alpha": 0.03, "rating": "Buy"},
               {"ticker": "AAPL", "date": "2024-02-05", "pending": True}]
    rows = lesson_rows("bull_memory", _lessons(), track_records(runs, entries))
    assert [r["id"] for r in rows] == ["L0", "L1", "L2", "L3"] and [r["order"] for r in rows] == [0, 1, 2, 3]
    assert len({tuple(r) for r in rows}) == 1  # the same columns, in the same order, for every row
    used = rows[1]
    assert (used["retrieved"], used["settled"], used["right"], used["wrong"]) == (2, 1, 1, 0)
    assert used["helpfulness"] == 1.0 and used["mean_alpha"] == 0.03
    assert used["decisions"] == [("NVDA", "2024-02-05"), ("AAPL", "2024-02-05")]
    for r in (rows[0], rows[2], rows[3]):  # L3 was retrieved by the bear's memory, not this one
        assert (r["retrieved"], r["settled"], r["right"], r["wrong"]) == (0, 0, 0, 0)
        assert r["helpfulness"] is None and r["mean_alpha"] is None and r["decisions"] == []
    rows[0]["decisions"].append(("X", "2024-01-01"))
    assert rows[3]["decisions"] == []  # each row has its own list
    assert rows[2]["retired"] and not rows[0]["retired"] and rows[1]["known_from"] == "2024-01-05"
    assert [r["id"] for r in sort_rows(rows, "helpfulness")] == ["L1", "L0", "L2", "L3"]


def test_ranked_rows_are_the_sorted_rows_cut_to_the_limit():
    import random

    from studio.lessons import TrackRecord

    rng = random.Random(3)
    lessons = [{"id": f"L{i}", "recommendation": f"a{i}", "situation": f"s{i}", "retired": rng.random() < 0.1}
               for i in range(300)]
    records = {}
    for i in rng.sample(range(300), 60):
        alphas = [rng.choice([-0.02, 0.0, 0.01, 0.03]) for _ in range(rng.randint(0, 3))]
        right = rng.randint(0, len(alphas))
        records[("bull_memory", f"L{i}")] = TrackRecord("bull_memory", f"L{i}", rng.randint(1, 4),
                                                        [("NVDA", "2024-02-05")], alphas, right,
                                                        rng.randint(0, len(alphas) - right))
    for by in ("helpfulness", "retrieved", "newest"):
        full = sort_rows(lesson_rows("bull_memory", lessons, records), by)
        for limit in (None, 500, 50, 1):
            total, rows = ranked_rows("bull_memory", lessons, records, by, limit)
            assert total == 300 and rows == full[:limit]
    assert ranked_rows("bull_memory", [], records) == (0, [])
