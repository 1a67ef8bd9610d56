"""Examples of user code: a custom PettingZoo env and a callback plugin."""
