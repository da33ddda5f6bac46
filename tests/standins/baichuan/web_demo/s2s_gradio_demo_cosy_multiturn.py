"""Stand-in for web_demo/s2s_gradio_demo_cosy_multiturn.py: only the part the wrapper parses.

Never imported or executed; the wrapper reads the default of the "System Prompt" box.
"""

import gradio as gr

system_prompt_input = gr.Textbox(label="System Prompt", value="STAND-IN voice prompt")
generated_text = gr.Textbox(label="Generated Text", lines=5)
