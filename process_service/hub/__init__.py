"""The hub (Eddie): its organizational tools, talk, and hubs that know what each other did."""
