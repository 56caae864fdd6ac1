"""Batsim's resource numbering (batsim-semantics §2.1-2.2): roles, master, ids, machine limit.

Ids are what schedulers see, so the rules are Batsim's to the letter: hosts in byte order,
compute ids first (truncated by the machine limit), storage ids after them, the master excluded;
a CLI role on a host that already has one yields an invalid combined role, as in Batsim.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from batsim_py.errors import PlatformError
from batsim_py.platform.model import Host, Machine, Machines, Platform

ROLES = ("", "compute_node", "storage", "master")


def build_machines(
    platform: Platform,
    *,
    master_host: str = "master_host",
    extra_roles: Sequence[tuple[Sequence[str], str]] = (),
    mmax: int = 0,
    mmax_workload: int | None = None,
) -> Machines:
    """Number the platform's hosts as Batsim does.

    `extra_roles` are the `-r hosts:role` options, `master_host` the `-m` one; `mmax` is
    `--mmax` (0: no limit) and `mmax_workload` the largest nb_res of the workloads when
    `--mmax-workload` is given.
    """
    label = platform.path
    cli_roles: dict[str, str] = {master_host: "master"}
    for hosts, role in extra_roles:
        for name in hosts:
            cli_roles[name] = role

    compute: list[Host] = []
    storage: list[Host] = []
    master: Host | None = None
    for name, host in platform.hosts.items():
        props = dict(host.properties)
        role = props.get("role", "")
        if name in cli_roles:
            role = f"{role},{cli_roles[name]}" if "role" in props else cli_roles[name]
        props["role"] = role
        if role not in ROLES:
            raise PlatformError(
                f"{label}: host '{name}': role '{role}' is invalid (valid roles: compute_node, "
                "storage, master; a host takes one role: give it either a role property or a "
                "-m/-r option, not both)"
            )
        host = replace(host, properties=props)
        if role == "master":
            if master is not None:
                raise PlatformError(
                    f"{label}: two master hosts, '{master.name}' and '{name}': keep one (role "
                    "property or -m option)"
                )
            master = host
        elif role == "storage":
            storage.append(host)
        else:
            if not host.speed > 0:
                raise PlatformError(
                    f"{label}: host '{name}' is a compute node but its speed in pstate "
                    f"{host.pstate} is not positive (fix its speed, or give it another role)"
                )
            compute.append(host)

    if master is None:
        raise PlatformError(
            f"{label}: no master host: there is no host '{master_host}' and no host has "
            "<prop id=\"role\" value=\"master\"/> (name the master with -m HOST or add the prop)"
        )

    limit = _limit(mmax, mmax_workload)
    if limit:
        if limit > len(compute):
            raise PlatformError(
                f"{label}: cannot compute on M={limit} machines: the platform has only "
                f"{len(compute)} compute machines (lower --mmax or the workloads' nb_res)"
            )
        compute = compute[:limit]

    compute_m = tuple(Machine(i, h, "compute_node") for i, h in enumerate(compute))
    storage_m = tuple(Machine(len(compute) + i, h, "storage") for i, h in enumerate(storage))
    return Machines(compute_m, storage_m, master)


def _limit(mmax: int, mmax_workload: int | None) -> int:
    """The effective machine limit (0: none): --mmax alone, workload max alone, or their min."""
    if mmax < 0:
        raise PlatformError(f"--mmax {mmax} must be 0 (no limit) or positive")
    if mmax_workload is not None and mmax_workload < 0:
        raise PlatformError(f"the workloads' nb_res {mmax_workload} must be non-negative")
    if mmax > 0 and mmax_workload:
        return min(mmax, mmax_workload)
    return mmax or (mmax_workload or 0)
