"""neardup.Client against a real `neardup serve`."""

import pytest
from conftest import serving

import neardup


@pytest.fixture()
def server(neardup_bin, tmp_path):
    with serving(neardup_bin, tmp_path / "db", token="secret") as url:
        yield url


def test_client_round_trip(server, news):
    client = neardup.Client(server, token="secret")
    first = client.add(news[1]["text"], id=news[1]["id"], url=news[1]["url"])
    assert first["verdict"] == "unique" and first["inserted"]
    copy = next(d for d in news if d["id"] == "council-budget-copy")
    verdict = client.check(copy["text"], id=copy["id"])
    assert verdict["verdict"] == "duplicate" and verdict["duplicate_of"] == news[1]["id"] and not verdict["inserted"]
    assert verdict["kind"] == "exact"
    assert verdict["measure"] == "digest"
    results = client.add_many([{"id": d["id"], "text": d["text"]} for d in news[2:5]])
    assert len(results) == 3 and all("verdict" in r for r in results)
    record = client.get(news[1]["id"])
    assert record["id"] == news[1]["id"] and len(record["simhash"]) == 16
    assert client.stats()["documents"] == 1 + sum(r["inserted"] for r in results)
    assert client.delete(news[1]["id"]) and not client.delete(news[1]["id"])
    assert client.get(news[1]["id"]) is None


def test_client_errors(server):
    with pytest.raises(neardup.client.ServiceError) as e:
        neardup.Client(server, token="wrong").stats()
    assert e.value.status == 401
    with pytest.raises(neardup.client.ServiceError) as e:
        neardup.Client(server, token="secret").check()  # neither text nor html
    assert e.value.status == 400 and isinstance(e.value, ValueError)
