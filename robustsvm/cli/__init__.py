"""The command line: the commands, reading a user's table, the certificate command, the demo."""
