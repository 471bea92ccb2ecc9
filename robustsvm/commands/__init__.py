"""The command line's parts beside :mod:`robustsvm.cli`: value parsers, the ``cv`` command, prediction metrics."""
