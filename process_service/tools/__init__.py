"""The tools process_service hosts for engines: process tools and their specs and arguments, Slartibartfast's, delegate, how_do_i, and the ToolHost servicer."""
