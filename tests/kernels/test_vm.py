# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The matrix's own machinery (vm.py), without booting anything: the
console parser and the private apt configuration."""
import os
import subprocess

import vm


def test_console_results_between_markers():
    m = vm.MARK
    console = (f"SeaBIOS junk\r\n{m} start 6.1.0-56-cloud-amd64\r\n"
               f"{m} case command 7.75\r\n"
               f"{m} begin command.json\r\n{{\r\n"
               "[   12.345678] a kernel message inside\r\n"
               '  "calls": 1\r\n}\r\n\r\n'
               f"{m} end command.json\r\n"
               f"{m} begin cut.err\r\nhalf of it\r\n")
    results, finished = vm.parse_console(console)
    assert results == {"command.json": '{\n  "calls": 1\n}\n'}
    assert finished is False, "no done line: the guest did not finish"
    results, finished = vm.parse_console(console + f"{m} done\r\n")
    assert finished is True


def test_apt_configuration_is_private():
    """Nothing of the machine's apt configuration applies (its sources,
    hooks, Check-Valid-Until...): only the matrix's own file."""
    env = vm.apt_env(vm.KERNELS[0].arch, vm.KERNELS[0].suite)
    dump = subprocess.run(["apt-config", "dump"], env=env, check=True,
                          stdout=subprocess.PIPE, text=True).stdout
    conf = {}
    for line in dump.splitlines():
        key, _, value = line.partition(" ")
        conf.setdefault(key.lower(), value.strip('";'))
    assert not [k for k in conf if "invoke" in k], "the machine's hooks apply"
    assert "acquire::check-valid-until" not in conf
    for key in ("dir::etc::sourcelist", "dir::etc::sourceparts",
                "dir::etc::parts", "dir::state::lists", "dir::state::status",
                "dir::cache"):
        assert conf[key].startswith(vm.CACHE + os.sep), (key, conf[key])
    with open(conf["dir::etc::sourcelist"]) as f:
        sources = f.read()
    assert f"signed-by={vm.KEYRING}" in sources
