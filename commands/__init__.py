"""The command-line skin beside `cli.py`: click commands that parse options, call the library
(`prdup/`) and print. The library itself imports no click, so it is callable without it."""
