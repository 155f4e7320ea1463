"""Generated protobuf and gRPC code for ``proto/arena/v1/arena.proto`` (``make proto``).

Nothing here is edited by hand; the Makefile regenerates it from the .proto file.
"""
