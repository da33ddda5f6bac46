"""Stand-in for Baichuan-Omni-1.5 web_demo/constants.py: role markers and the output rate.

The markers are stand-ins too: the wrapper must take them from here, not hard-code them.
"""

sampling_rate = 24000
role_prefix = {
    "system": "<SYS>",
    "user": "<Q>",
    "assistant": "<A>",
    "audiogen": "<AUDIOTEXT>",
}
