"""The benchmark: `make bench` (= `python -m bench`) starts the whole system on loopback and
measures steer latency, turn throughput, server CPU per turn and process_service memory."""
