"""The command line run in-process, as the CLI tests call it: exit status, standard output and error."""

from attention_explorer.cli import main


def run_cli(capsys, *argv):
    """`attention-explorer *argv` (paths and numbers given as they are); (exit code, stdout, stderr)."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err
