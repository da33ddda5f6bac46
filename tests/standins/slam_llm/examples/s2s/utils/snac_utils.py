"""Stand-in for examples/s2s/utils/snac_utils.py: the two layer-shift functions."""


def layershift(input_id, layer, stride=4160, shift=152000):
    return input_id + shift + layer * stride


def simple_shift(input_id, layer, stride=4160, shift=152000):
    return input_id + shift
