"""Batsim's resource numbering: byte-ordered hosts, compute then storage ids, one master."""

import pytest

from batsim_py.errors import PlatformError
from batsim_py.platform import Platform, build_machines


def hosts(*specs: str) -> str:
    """'name' or 'name:role' -> <host> elements in a Full zone."""
    out = []
    for spec in specs:
        name, _, role = spec.partition(":")
        prop = f'<prop id="role" value="{role}"/>' if role else ""
        out.append(f'<host id="{name}" speed="1Gf">{prop}</host>')
    return '<zone id="z" routing="Full">' + "".join(out) + "</zone>"


@pytest.fixture
def p(platform_of) -> Platform:
    return platform_of(hosts("a100", "a10", "a1", "B2", "a0", "master_host", "s1:storage",
                             "s0:storage", "a2:compute_node"))


def test_ids_in_byte_order(p: Platform) -> None:
    m = build_machines(p)
    assert [(x.id, x.name) for x in m.compute] == [
        (0, "B2"), (1, "a0"), (2, "a1"), (3, "a10"), (4, "a100"), (5, "a2")]
    assert [(x.id, x.name, x.role) for x in m.storage] == [(6, "s0", "storage"),
                                                            (7, "s1", "storage")]
    assert m.master.name == "master_host" and len(m) == 8
    assert [x.id for x in m.all] == list(range(8))


def test_role_property_always_present(p: Platform) -> None:
    m = build_machines(p)
    assert m.compute[0].host.properties == {"role": ""}
    assert m.compute[5].host.properties == {"role": "compute_node"}
    assert m.storage[0].host.properties == {"role": "storage"}
    assert m.master.properties == {"role": "master"}
    assert p.hosts["B2"].properties == {}  # the platform itself is untouched


def test_mmax_truncates_compute_only(p: Platform) -> None:
    m = build_machines(p, mmax=2)
    assert [x.name for x in m.compute] == ["B2", "a0"]
    assert [(x.id, x.name) for x in m.storage] == [(2, "s0"), (3, "s1")]
    assert len(build_machines(p, mmax_workload=3).compute) == 3
    assert len(build_machines(p, mmax=4, mmax_workload=3).compute) == 3
    assert len(build_machines(p, mmax=2, mmax_workload=3).compute) == 2
    assert len(build_machines(p, mmax=0, mmax_workload=None).compute) == 6
    with pytest.raises(PlatformError, match="cannot compute on M=7 machines.*only 6"):
        build_machines(p, mmax=7)
    with pytest.raises(PlatformError, match="--mmax -1"):
        build_machines(p, mmax=-1)


def test_cli_roles(p: Platform) -> None:
    m = build_machines(p, extra_roles=[(["a0", "a1"], "storage")])
    assert [x.name for x in m.storage] == ["a0", "a1", "s0", "s1"]
    assert m.storage[0].id == 4
    m = build_machines(p, master_host="a0", extra_roles=[(["master_host"], "compute_node")])
    assert m.master.name == "a0" and "master_host" in [x.name for x in m.compute]
    # a CLI role on a host that has a role property makes an invalid combined role
    with pytest.raises(PlatformError, match="host 's0': role 'storage,master' is invalid"):
        build_machines(p, master_host="s0")


def test_master_by_property(platform_of) -> None:
    p = platform_of(hosts("h0", "h1", "boss:master"))
    m = build_machines(p)  # the default -m master_host names nothing: harmless
    assert m.master.name == "boss" and [x.id for x in m.compute] == [0, 1]


def test_master_errors(platform_of) -> None:
    with pytest.raises(PlatformError, match="no master host"):
        build_machines(platform_of(hosts("h0", "h1")))
    with pytest.raises(PlatformError, match="two master hosts, 'a' and 'b'"):
        build_machines(platform_of(hosts("a:master", "b:master")))
    with pytest.raises(PlatformError, match="host 'master_host': role 'master,master'"):
        build_machines(platform_of(hosts("master_host:master")))
    with pytest.raises(PlatformError, match="role 'boss' is invalid"):
        build_machines(platform_of(hosts("master_host", "h:boss")))


def test_compute_speed_must_be_positive(platform_of) -> None:
    p = platform_of('<zone id="z" routing="Full"><host id="master_host" speed="0f"/>'
                    '<host id="h" speed="0f"/></zone>')
    with pytest.raises(PlatformError, match="host 'h' is a compute node but its speed"):
        build_machines(p)
