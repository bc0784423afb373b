"""Vision-language model agents: an OpenAI-compatible chat client, the benchmarks' prompts as
editable templates, reply parsing with repair turns, transcripts and usage accounting. ROS-free."""
